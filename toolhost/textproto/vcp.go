package textproto

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxNotes bounds the notes kept for one call.
const maxNotes = 8

// ParseVCP finds the VCP TOOL_REQUEST blocks of reply as the server does.
func ParseVCP(reply string, fuzzy bool) Result {
	return Parse(reply, Options{Fuzzy: fuzzy, Formats: []Format{FormatVCP}})
}

// vcpParser holds one parse of a stripped reply.
type vcpParser struct {
	st    stripped
	lines lineIndex
	fuzzy bool
}

// parseVCP reads the blocks of st (§2–§4) and reports the spans of the
// stripped text they cover.
func parseVCP(st stripped, fuzzy bool, lines lineIndex) (Result, []span) {
	p := vcpParser{st: st, lines: lines, fuzzy: fuzzy}
	var res Result
	var spans []span
	text := st.text
	lower := asciiLower(text)
	starts := blockMarker(text, lower, blockStart, fuzzy)
	ends := blockMarker(text, lower, blockEnd, fuzzy)
	escStarts := escapeToken(text, lower, startChar)
	escEnds := escapeToken(text, lower, endChar)

	for offset := 0; offset < len(text); {
		si, sn := starts.next(offset)
		if si < 0 {
			break
		}
		contentStart := si + sn
		// §2: find the end marker, skipping ESCAPE regions.
		ei, en, reason := -1, 0, ""
		for cursor := contentStart; ; {
			e, n := ends.next(cursor)
			if e < 0 {
				reason = fmt.Sprintf("no end marker %s follows: the server drops this block and reads no block after it (§2)", blockEnd)
				break
			}
			x, xn := escStarts.next(cursor)
			if x < 0 || e < x {
				ei, en = e, n
				break
			}
			y, yn := escEnds.next(x + xn)
			if y < 0 {
				reason = fmt.Sprintf("the ESCAPE region opened on line %d (%s) never closes, so the block has no end: the server drops it and reads no block after it (§2)",
					p.line(x), text[x:x+xn])
				break
			}
			cursor = y + yn
		}
		if ei < 0 {
			res.Rejected = append(res.Rejected, p.reject(si, reason))
			// Every later start marker is never read (§2).
			for at := contentStart; ; {
				i, n := starts.next(at)
				if i < 0 {
					break
				}
				res.Rejected = append(res.Rejected, p.reject(i, fmt.Sprintf("not read: the server stopped at the unterminated block on line %d (§2)", p.line(si))))
				at = i + n
			}
			break
		}
		spans = append(spans, span{si, ei + en})
		content := trimJS(text[contentStart:ei])
		if c, why := p.block(content); why != "" {
			res.Rejected = append(res.Rejected, p.reject(si, why))
		} else {
			c.Offset = st.toReply(si)
			c.Line = lines.line(c.Offset)
			res.Calls = append(res.Calls, c)
		}
		offset = ei + en
	}
	res.Rejected = append(res.Rejected, p.hidden(fuzzy)...)
	return res, spans
}

func (p *vcpParser) line(strippedOff int) int { return p.lines.line(p.st.toReply(strippedOff)) }

func (p *vcpParser) reject(strippedOff int, reason string) Rejected {
	off := p.st.toReply(strippedOff)
	return Rejected{Format: FormatVCP, Line: p.lines.line(off), Reason: reason, Offset: off}
}

// field is one key and raw value read from a block (§3).
type field struct{ key, value string }

// block turns a block's trimmed content into a call (§4), or says why it is none.
func (p *vcpParser) block(content string) (Call, string) {
	if content == "" {
		return Call{}, "the block is empty (§4)"
	}
	fields, notes := scanFields(content, p.fuzzy)
	if len(fields) == 0 {
		return Call{}, withNotes("no field of the form key:「始」value「末」 (§3, §4)", notes)
	}
	c := Call{Format: FormatVCP, Args: map[string]json.RawMessage{}}
	args := map[string]string{}
	hasTool := false
	for _, f := range fields {
		v := trimJS(f.value) // §4: every value is trimmed
		switch f.key {
		case "tool_name":
			c.Tool, hasTool = v, true // the last one wins
		case "archery":
			c.Archery = v == "true" || v == "no_reply"
			c.ArcheryNoReply = v == "no_reply"
		case "ink":
			c.MarkHistory = v == "mark_history"
		case "river":
			c.River = &v
		case "vref":
			c.Vref = &v
		case "request_id":
			// Seed 000 §4.2.4: the request's id, not an argument; echoed in
			// its result. The server itself passes it on as an argument.
			c.ID = v
		case "__proto__":
			// Assigning a string to a JavaScript object's __proto__ does nothing.
			notes = append(notes, "the key __proto__ is dropped: the server's arguments object cannot hold it")
		default:
			args[f.key] = v // a repeated key keeps its last value
		}
	}
	// §4: valet is copied to maid when maid is not set (JavaScript truthiness:
	// an empty maid counts as not set, an empty valet is not copied).
	if args["valet"] != "" && args["maid"] == "" {
		args["maid"] = args["valet"]
	}
	switch {
	case !hasTool:
		return Call{}, withNotes("no tool_name field (§4)", notes)
	case c.Tool == "":
		return Call{}, withNotes("tool_name is empty (§4; the last tool_name counts)", notes)
	}
	for k, v := range args {
		c.Args[k] = stringJSON(v)
	}
	if len(notes) > maxNotes {
		notes = append(notes[:maxNotes], fmt.Sprintf("… and %d more notes", len(notes)-maxNotes))
	}
	c.Notes = notes
	return c, ""
}

func withNotes(reason string, notes []string) string {
	if len(notes) == 0 {
		return reason
	}
	if len(notes) > 3 {
		notes = append(notes[:3], "…")
	}
	return reason + "; " + strings.Join(notes, "; ")
}

// scanFields reads the fields of a block's content as the server's field
// scanner does, rule by rule (§3), with notes on what it ignored.
func scanFields(s string, fuzzy bool) ([]field, []string) {
	var fields []field
	var notes []string
	ends := fieldEnd(s, fuzzy)
	// Only the escape tokens need the lowered text, and only when the block
	// has an "escape" in some case.
	lower := s
	if containsFold(s, escapeWord) {
		lower = asciiLower(s)
	}
	escEnds := escapeToken(s, lower, endChar)
	skippedAt := -1 // where rule 2 last skipped a character
	for cursor := 0; cursor < len(s); {
		// Rule 1: skip whitespace and commas.
		cursor = skipSpaceComma(s, cursor)
		if cursor >= len(s) {
			break
		}
		// Rule 2: a key is the longest ASCII \w run; else skip one character.
		k := cursor
		for k < len(s) && isWord(s[k]) {
			k++
		}
		if k == cursor {
			_, n := utf8.DecodeRuneInString(s[cursor:])
			cursor += n
			skippedAt = cursor
			continue
		}
		key := s[cursor:k]
		partial := skippedAt == cursor
		cursor = skipJSSpace(s, k)
		// Rule 3: a colon must follow.
		if cursor >= len(s) || s[cursor] != ':' {
			continue
		}
		cursor = skipJSSpace(s, cursor+1)
		if partial {
			r, _ := utf8.DecodeLastRuneInString(s[:k-len(key)])
			notes = append(notes, fmt.Sprintf("key %q follows %q, which no key may contain: the server reads the key as %q (§3 rule 2)", key, string(r), key))
		}
		// Rule 4: an ESCAPE value, a 「始」 value, or nothing.
		var valueFrom, valueTo, next int
		isEscape := false
		if n := escapeAt(s, cursor, startChar); n > 0 {
			isEscape = true
			valueFrom = cursor + n
			e, en := escEnds.next(valueFrom)
			if e < 0 {
				notes = append(notes, fmt.Sprintf("the ESCAPE value of %q has no 「末ESCAPE」: the server ignores it and the rest of the block (§3 rule 5)", key))
				break
			}
			valueTo, next = e, e+en
		} else if n := fieldStartAt(s, cursor, fuzzy); n > 0 {
			valueFrom = cursor + n
			e, en := ends.next(valueFrom)
			if e < 0 {
				notes = append(notes, fmt.Sprintf("the value of %q has no end marker 「末」: the server ignores it and the rest of the block (§3 rule 5)", key))
				break
			}
			valueTo, next = e, e+en
		} else {
			notes = append(notes, fmt.Sprintf("key %q has no 「始」value「末」 after its colon: the server ignores it (§3 rule 4)", key))
			continue
		}
		value := s[valueFrom:valueTo]
		if isEscape {
			value = restoreEscaped(value)
		}
		fields = append(fields, field{key, value})
		// Rule 6: whitespace and one optional comma after the end marker.
		cursor = skipJSSpace(s, next)
		if cursor < len(s) && s[cursor] == ',' {
			cursor++
		}
	}
	return fields, notes
}

// containsFold reports whether s contains word (lower case), ASCII
// case-insensitively.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if lowerASCII(s[i]) == word[0] && hasFoldPrefix(s[i:], word) {
			return true
		}
	}
	return false
}

func skipSpaceComma(s string, i int) int {
	for i < len(s) {
		if s[i] == ',' {
			i++
			continue
		}
		j := skipJSSpace(s, i)
		if j == i {
			return i
		}
		i = j
	}
	return i
}

// escapedLiterals are restored inside ESCAPE values, in this order (§3 rule 4).
var escapedLiterals = [][2]string{
	{"<<<[TOOL_REQUEST_ESCAPE]>>>", "<<<[TOOL_REQUEST]>>>"},
	{"<<<[END_TOOL_REQUEST_ESCAPE]>>>", "<<<[END_TOOL_REQUEST]>>>"},
	{"「始ESCAPE」", "「始」"},
	{"「末ESCAPE」", "「末」"},
}

// restoreEscaped restores the escaped literals, then replaces the first
// remaining escape-start and escape-end variant (any case, any bracket)
// by 「始」 and 「末」, as the server's non-global replace does.
func restoreEscaped(v string) string {
	for _, l := range escapedLiterals {
		v = strings.ReplaceAll(v, l[0], l[1])
	}
	for _, ch := range []string{startChar, endChar} {
		lower := asciiLower(v)
		if i, n := escapeToken(v, lower, ch).next(0); i >= 0 {
			v = v[:i] + cornerOpen + ch + cornerClose + v[i+n:]
		}
	}
	return v
}

// hidden reports the start markers the server never sees because they are
// inside a reasoning block (§1).
func (p *vcpParser) hidden(fuzzy bool) []Rejected {
	var out []Rejected
	for _, r := range p.st.removed {
		seg := p.st.reply[r.start:r.end]
		starts := blockMarker(seg, asciiLower(seg), blockStart, fuzzy)
		for at := 0; ; {
			i, n := starts.next(at)
			if i < 0 {
				break
			}
			off := r.start + i
			reason := "inside a reasoning block (<think>…</think>), which the server removes before parsing (§1)"
			if r.unclosedAt >= 0 {
				reason = fmt.Sprintf("after the reasoning tag on line %d that is never closed: the server discards everything from that tag on (§1)", p.lines.line(r.unclosedAt))
			}
			out = append(out, Rejected{Format: FormatVCP, Line: p.lines.line(off), Reason: reason, Offset: off})
			at = i + n
		}
	}
	return out
}
