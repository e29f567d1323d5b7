package builtin

import "strings"

// wildmatch is git's pattern matcher (wildmatch.c with WM_PATHNAME, case
// sensitive), byte for byte as git matches .gitignore patterns: '*' and '?'
// never match '/', "**" as a whole path component matches any number of
// directories, brackets take ranges, '!' or '^' negation and [:class:]
// names, and a backslash makes the next byte literal.
func wildmatch(pattern, text string) bool {
	return dowild(pattern, 0, text) == wmMatch
}

// The results of dowild. The aborts cut the search short: no later
// position of an enclosing '*' can match either (wmAbortToStarStar: of an
// enclosing single '*', which cannot cross the '/' it reached).
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// dowild matches pat[i:] against text; pat[:i] is kept to tell whether a
// "**" starts a path component.
func dowild(pat string, i int, text string) int {
	for ; i < len(pat); i, text = i+1, text[1:] {
		pc := pat[i]
		if len(text) == 0 && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if len(text) > 0 {
			tc = text[0]
		}
		switch pc {
		case '\\':
			// A trailing backslash matches nothing (git compares the NUL after it).
			if i+1 >= len(pat) || tc != pat[i+1] {
				return wmNoMatch
			}
			i++
		case '?':
			if tc == '/' {
				return wmNoMatch
			}
		case '*':
			return star(pat, i, text)
		case '[':
			next, matched, res := bracket(pat, i, tc)
			if res != wmMatch {
				return res
			}
			if !matched || tc == '/' {
				return wmNoMatch
			}
			i = next
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
	}
	if len(text) > 0 {
		return wmNoMatch
	}
	return wmMatch
}

// star matches pat[i:], which starts with '*', against text.
func star(pat string, i int, text string) int {
	first := i
	i++
	matchSlash := false
	if i < len(pat) && pat[i] == '*' {
		for i < len(pat) && pat[i] == '*' {
			i++
		}
		// "**" counts only as a whole path component; elsewhere it is '*'.
		startsComponent := first == 0 || pat[first-1] == '/'
		endsComponent := i == len(pat) || pat[i] == '/' || (pat[i] == '\\' && i+1 < len(pat) && pat[i+1] == '/')
		if startsComponent && endsComponent {
			// "a/**/b" matches "a/b": try "**/" as nothing first.
			if i < len(pat) && pat[i] == '/' && dowild(pat, i+1, text) == wmMatch {
				return wmMatch
			}
			matchSlash = true
		}
	}
	if i == len(pat) {
		// A trailing "**" matches everything, a trailing '*' the rest of one component.
		if !matchSlash && strings.Contains(text, "/") {
			return wmNoMatch
		}
		return wmMatch
	}
	if !matchSlash && pat[i] == '/' {
		// '*' then '/': the '*' takes the rest of this component.
		slash := strings.IndexByte(text, '/')
		if slash < 0 {
			return wmNoMatch
		}
		return dowild(pat, i, text[slash:])
	}
	for ; len(text) > 0; text = text[1:] {
		switch m := dowild(pat, i, text); {
		case m == wmNoMatch:
			if !matchSlash && text[0] == '/' {
				return wmAbortToStarStar
			}
		case !matchSlash || m != wmAbortToStarStar:
			return m
		}
	}
	return wmAbortAll
}

// bracket matches the byte tc against the bracket expression at pat[i]
// ('['). It returns the index of the closing ']' and whether tc is in the
// set; res is wmAbortAll when the expression is not closed or names an
// unknown class, as in git.
func bracket(pat string, i int, tc byte) (end int, matched bool, res int) {
	at := func(k int) byte { // the byte at k, or 0 past the end, as C reads it
		if k < len(pat) {
			return pat[k]
		}
		return 0
	}
	i++
	pc := at(i)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		i++
		pc = at(i)
	}
	var prev byte
	for {
		if pc == 0 {
			return 0, false, wmAbortAll
		}
		switch {
		case pc == '\\':
			i++
			pc = at(i)
			if pc == 0 {
				return 0, false, wmAbortAll
			}
			if tc == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && at(i+1) != 0 && at(i+1) != ']':
			i++
			pc = at(i)
			if pc == '\\' {
				i++
				pc = at(i)
				if pc == 0 {
					return 0, false, wmAbortAll
				}
			}
			if tc <= pc && tc >= prev {
				matched = true
			}
			pc = 0 // a range does not start another
		case pc == '[' && at(i+1) == ':':
			s := i + 2
			k := s
			for at(k) != 0 && at(k) != ']' {
				k++
			}
			if at(k) == 0 {
				return 0, false, wmAbortAll
			}
			if k-s-1 < 0 || pat[k-1] != ':' {
				// No ":]": the '[' is an ordinary member.
				if tc == '[' {
					matched = true
				}
				pc = '['
				break
			}
			in, known := inClass(pat[s:k-1], tc)
			if !known {
				return 0, false, wmAbortAll
			}
			if in {
				matched = true
			}
			i = k
			pc = 0
		default:
			if tc == pc {
				matched = true
			}
		}
		prev = pc
		i++
		pc = at(i)
		if pc == ']' {
			break
		}
	}
	return i, matched != negated, wmMatch
}

// inClass reports whether c is in the POSIX class name (C locale).
func inClass(name string, c byte) (in, known bool) {
	lower := 'a' <= c && c <= 'z'
	upper := 'A' <= c && c <= 'Z'
	digit := '0' <= c && c <= '9'
	graph := 0x21 <= c && c <= 0x7e
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || ('\t' <= c && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'), true
	}
	return false, false
}
