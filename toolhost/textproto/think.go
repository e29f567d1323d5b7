package textproto

import (
	"sort"
	"unicode/utf8"
)

// stripped is a reply with its reasoning blocks removed (§1), and the map
// back to the reply's offsets.
type stripped struct {
	reply string
	text  string
	// chunks are the kept pieces: chunk i is reply[orig[i] : orig[i]+len]
	// and starts at at[i] in text.
	at, orig []int
	// removed are the dropped ranges of the reply (tags and the text
	// between them), for telling the owner about blocks the server never sees.
	removed []removedRange
}

type removedRange struct {
	start, end int // in the reply
	// unclosedAt is the offset of the opening tag that was never closed,
	// -1 for a closed block or a lone tag.
	unclosedAt int
}

// toReply maps an offset of the stripped text to the reply.
func (s *stripped) toReply(off int) int {
	i := sort.SearchInts(s.at, off+1) - 1
	if i < 0 {
		return off
	}
	return s.orig[i] + off - s.at[i]
}

// stripReasoning removes <think>/<thinking> blocks as the server does (§1):
// tags matched case-insensitively with optional whitespace and any
// attributes; a depth counter that opening tags raise and closing tags lower
// (never below 0); text kept only at depth 0; tags always dropped; and when
// the reply ends inside a block, everything from the opening tag that left
// depth 0 on is discarded.
func stripReasoning(reply string) stripped {
	st := stripped{reply: reply}
	text := make([]byte, 0, len(reply))
	cursor, depth := 0, 0
	blockStart := -1 // where the current depth>0 region began
	gt := -1         // the first ">" at or after the last search, cached to stay linear
	keep := func(from, to int) {
		if to > from {
			st.at = append(st.at, len(text))
			st.orig = append(st.orig, from)
			text = append(text, reply[from:to]...)
		}
	}
	for pos := 0; ; {
		start, end, closing, ok := nextThinkTag(reply, pos, &gt)
		if !ok {
			break
		}
		if depth == 0 {
			keep(cursor, start)
			blockStart = start
		}
		if closing {
			if depth > 0 {
				depth--
			}
		} else {
			depth++
		}
		if depth == 0 {
			st.removed = append(st.removed, removedRange{blockStart, end, -1})
		}
		cursor, pos = end, end
	}
	if depth == 0 {
		keep(cursor, len(reply))
	} else {
		st.removed = append(st.removed, removedRange{blockStart, len(reply), blockStart})
	}
	st.text = string(text)
	return st
}

// nextThinkTag finds the server's /<\s*(\/?)\s*(think(?:ing)?)\b[^>]*>/i
// from pos: "<", JavaScript whitespace, an optional "/", whitespace, "think"
// or "thinking" (ASCII case-insensitive) not followed by a word character,
// then anything up to the first ">".
func nextThinkTag(s string, pos int, gt *int) (start, end int, closing, ok bool) {
	for i := pos; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := skipJSSpace(s, i+1)
		cl := false
		if j < len(s) && s[j] == '/' {
			cl = true
			j = skipJSSpace(s, j+1)
		}
		if !hasFoldPrefix(s[j:], "think") {
			continue
		}
		j += len("think")
		if hasFoldPrefix(s[j:], "ing") && !isWordAt(s, j+3) {
			j += 3
		} else if isWordAt(s, j) {
			continue
		}
		// [^>]* then ">": the first ">" after the name ends the tag.
		if *gt < j {
			*gt = indexByteFrom(s, j, '>')
		}
		k := *gt
		if k < 0 {
			return 0, 0, false, false // no ">" anywhere after: no later tag can match either
		}
		return i, k + 1, cl, true
	}
	return 0, 0, false, false
}

func indexByteFrom(s string, from int, c byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// isWordAt reports whether s[i] is a JavaScript \w character (ASCII).
func isWordAt(s string, i int) bool { return i < len(s) && isWord(s[i]) }

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// hasFoldPrefix reports whether s starts with prefix, ASCII case-insensitively
// (prefix is lower case), as a JavaScript /i regexp without /u compares.
func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isJSSpace is JavaScript's \s, which is also what String.prototype.trim
// removes: Go's unicode.IsSpace differs on U+0085 and U+FEFF.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func skipJSSpace(s string, i int) int {
	for i < len(s) {
		if s[i] < utf8.RuneSelf {
			if !isJSSpace(rune(s[i])) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isJSSpace(r) {
			return i
		}
		i += n
	}
	return i
}

// trimJS is JavaScript's String.prototype.trim.
func trimJS(s string) string {
	start := skipJSSpace(s, 0)
	end := len(s)
	for end > start {
		r, n := utf8.DecodeLastRuneInString(s[start:end])
		if !isJSSpace(r) {
			break
		}
		end -= n
	}
	return s[start:end]
}
