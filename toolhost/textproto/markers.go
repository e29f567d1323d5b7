package textproto

import "strings"

// The literal markers of the VCP text protocol (§2, §3).
const (
	blockStart      = "<<<[TOOL_REQUEST]>>>"
	blockEnd        = "<<<[END_TOOL_REQUEST]>>>"
	valueStart      = "「始」"
	valueEnd        = "「末」"
	cornerOpen      = "「"
	cornerClose     = "」"
	startChar       = "始"
	endChar         = "末"
	escapeWord      = "escape" // matched ASCII case-insensitively
	maxMarkerAngles = 4
)

// finder memoizes "the next match at or after from" for a cursor that only
// moves forward, so that repeated searches stay linear in the text.
type finder struct {
	find     func(from int) (idx, n int)
	from     int
	idx, n   int
	searched bool
}

func newFinder(find func(from int) (int, int)) *finder { return &finder{find: find} }

// literal finds s itself in text.
func literal(text, s string) *finder {
	return newFinder(func(from int) (int, int) {
		i := strings.Index(text[from:], s)
		if i < 0 {
			return -1, 0
		}
		return from + i, len(s)
	})
}

// around finds the first marker built around an occurrence of needle in
// hay: match gets the needle's offset i and the search start from and
// returns the marker's start and length, n = 0 when there is none at i.
func around(hay, needle string, match func(i, from int) (start, n int)) *finder {
	return newFinder(func(from int) (int, int) {
		for at := from; at < len(hay); {
			j := strings.Index(hay[at:], needle)
			if j < 0 {
				return -1, 0
			}
			i := at + j
			at = i + 1
			if start, n := match(i, from); n > 0 {
				return start, n
			}
		}
		return -1, 0
	})
}

func (f *finder) next(from int) (int, int) {
	if f.searched && from >= f.from && (f.idx < 0 || f.idx >= from) {
		return f.idx, f.n
	}
	f.idx, f.n = f.find(from)
	f.from, f.searched = from, true
	return f.idx, f.n
}

// asciiLower lowers ASCII letters only, keeping every byte offset. Text
// without any letter to lower is returned as it is.
func asciiLower(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

// blockMarker finds the block start (label "[TOOL_REQUEST]") or end
// ("[END_TOOL_REQUEST]") marker: the canonical text in strict mode, or the
// server's fuzzy /<{2,4}\[LABEL\]>{2,4}/i (§2). lower is asciiLower(text).
func blockMarker(text, lower, canonical string, fuzzy bool) *finder {
	if !fuzzy {
		return literal(text, canonical)
	}
	label := strings.ToLower(strings.Trim(canonical, "<>"))
	return around(lower, label, func(i, from int) (int, int) {
		// The leftmost start: as many "<" before the label as fit
		// (at most 4, none before from); at least 2 are needed.
		k := 0
		for k < maxMarkerAngles && i-k-1 >= from && text[i-k-1] == '<' {
			k++
		}
		if k < 2 {
			return 0, 0
		}
		e := i + len(label)
		m := 0
		for m < maxMarkerAngles && e+m < len(text) && text[e+m] == '>' {
			m++
		}
		if m < 2 {
			return 0, 0
		}
		return i - k, e + m - (i - k)
	})
}

// escapeToken finds the server's /[「{]始ESCAPE[」}]/i (ch = startChar) or
// /[「{]末ESCAPE[」}]/i (ch = endChar), unanchored (§2).
func escapeToken(text, lower, ch string) *finder {
	needle := ch + escapeWord
	return around(lower, needle, func(i, from int) (int, int) {
		start := openBracketBefore(text, i)
		if start < from {
			return 0, 0
		}
		if n := closeBracketAt(text, i+len(needle)); n > 0 {
			return start, i + len(needle) + n - start
		}
		return 0, 0
	})
}

// escapeAt reports the length of an escape token (of ch) at text[i:], or 0.
func escapeAt(text string, i int, ch string) int {
	n := openBracketAt(text, i)
	if n == 0 || !strings.HasPrefix(text[i+n:], ch) {
		return 0
	}
	j := i + n + len(ch)
	if !hasFoldPrefix(text[j:], escapeWord) {
		return 0
	}
	j += len(escapeWord)
	c := closeBracketAt(text, j)
	if c == 0 {
		return 0
	}
	return j + c - i
}

// openBracketBefore returns the offset of the "「" or "{" that ends at i, or -1.
func openBracketBefore(text string, i int) int {
	if i >= 1 && text[i-1] == '{' {
		return i - 1
	}
	if i >= len(cornerOpen) && text[i-len(cornerOpen):i] == cornerOpen {
		return i - len(cornerOpen)
	}
	return -1
}

// openBracketAt returns the length of a "「" or "{" at text[i:], or 0.
func openBracketAt(text string, i int) int {
	switch {
	case i < len(text) && text[i] == '{':
		return 1
	case strings.HasPrefix(text[i:], cornerOpen):
		return len(cornerOpen)
	}
	return 0
}

// closeBracketAt returns the length of a "」" or "}" at text[i:], or 0.
func closeBracketAt(text string, i int) int {
	switch {
	case i < len(text) && text[i] == '}':
		return 1
	case strings.HasPrefix(text[i:], cornerClose):
		return len(cornerClose)
	}
	return 0
}

// fuzzyMarkerAt matches the server's /^[「{]CH(?!ESCAPE)(?:[^\r\n「{]*?[」}])/
// at text[i:] (§3 rule 4): a bracket, the character, not "ESCAPE" (case
// sensitive, unlike the escape tokens), then the shortest run without a
// line break or an opening bracket that ends in "」" or "}". It returns
// the match's length, or 0.
func fuzzyMarkerAt(text string, i int, ch string) int {
	n := openBracketAt(text, i)
	if n == 0 || !strings.HasPrefix(text[i+n:], ch) {
		return 0
	}
	j := i + n + len(ch)
	if strings.HasPrefix(text[j:], "ESCAPE") {
		return 0
	}
	for j < len(text) {
		if c := closeBracketAt(text, j); c > 0 {
			return j + c - i
		}
		if text[j] == '\r' || text[j] == '\n' || openBracketAt(text, j) > 0 {
			return 0
		}
		j++
	}
	return 0
}

// fieldStartAt matches a value's start marker at text[i:] (§3 rule 4):
// 「始」, and in fuzzy mode also {始}, {始」, 「始} and the fuzzy shape.
func fieldStartAt(text string, i int, fuzzy bool) int {
	if strings.HasPrefix(text[i:], valueStart) {
		return len(valueStart)
	}
	if !fuzzy {
		return 0
	}
	return fuzzyMarkerAt(text, i, startChar) // covers {始}, {始」 and 「始} too
}

// fieldEnd finds a value's end marker from a position (§3 rule 4): the
// first 「末」, or in fuzzy mode the earliest of 「末」, {末}, {末」, 「末} and
// the fuzzy shape.
func fieldEnd(text string, fuzzy bool) *finder {
	if !fuzzy {
		return literal(text, valueEnd)
	}
	return around(text, endChar, func(i, from int) (int, int) {
		start := openBracketBefore(text, i)
		if start < from {
			return 0, 0
		}
		return start, fuzzyMarkerAt(text, start, endChar)
	})
}
