package toolhost

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// What the dispatcher does with a result above max_result_bytes.
const (
	// OversizeTruncate keeps the head of the result's text and says what
	// was left out, so the model has something to go on and can ask for
	// the rest; the default.
	OversizeTruncate = "truncate"
	// OversizeError answers with an error naming the sizes.
	OversizeError = "error"
)

// Oversizes lists the oversize settings.
var Oversizes = []string{OversizeTruncate, OversizeError}

// truncateNoteRoom is kept free for the note that ends a truncated result.
const truncateNoteRoom = 400

// truncateResult cuts an encoded result to at most maxBytes. A result of
// content parts ({"content": [...]}, as string results and most tools' are)
// keeps its parts: text parts keep their head, cut on a character boundary,
// as far as they fit; a part of another kind (an image, a file) is kept
// whole or left out whole, never half-sent. Fields beside "content" (a
// plugin's "details") go first. Any other result becomes one text part, the
// head of its JSON. A text part closes the result saying how much was left
// out and how to get the rest. ok is false for a limit too small for the
// note.
func truncateResult(tool string, b []byte, maxBytes int) (out json.RawMessage, ok bool) {
	if maxBytes < 2*truncateNoteRoom {
		return nil, false
	}
	parts, besides := resultParts(b)
	budget := maxBytes - truncateNoteRoom - len(`{"content":[]}`)
	kept := make([]any, 0, len(parts)+1)
	droppedParts, droppedBytes := 0, 0
	for _, p := range parts {
		raw, err := marshalJSON(p)
		if err != nil {
			return nil, false
		}
		size := len(raw) + 1 // and its comma
		if size <= budget {
			kept = append(kept, json.RawMessage(raw))
			budget -= size
			continue
		}
		var typ, text string
		if json.Unmarshal(p["type"], &typ) == nil && typ == "text" && json.Unmarshal(p["text"], &text) == nil && len(p) == 2 {
			// The head of the text, as much as fits once encoded.
			head := textHead(text, budget-len(`{"type":"text","text":""},`))
			if head != "" {
				kept = append(kept, ContentPart{Type: "text", Text: head})
				budget -= encodedTextLen(head) + len(`{"type":"text","text":""},`)
			}
			droppedBytes += len(text) - len(head)
			if head == "" {
				droppedParts++
			}
			continue
		}
		droppedParts++
		droppedBytes += len(raw)
	}
	note := fmt.Sprintf("[result of %s truncated: %d bytes of %d left out to stay under the node's max_result_bytes (%d)",
		tool, droppedBytes, len(b), maxBytes)
	if droppedParts > 0 {
		note += fmt.Sprintf(", %d part(s) dropped whole", droppedParts)
	}
	if besides != "" {
		note += ", " + besides
	}
	note += ". Ask for less to get the rest: a range (ReadFile's startLine and endLine), a narrower path or search, fewer items.]"
	kept = append(kept, ContentPart{Type: "text", Text: note})
	out, err := marshalJSON(struct {
		Content []any `json:"content"`
	}{kept})
	if err != nil || len(out) > maxBytes {
		return nil, false
	}
	return out, true
}

// resultParts are the content parts of an encoded result, and what was
// set aside to get them: the fields beside "content", or, for a result of
// another shape, that its JSON is given as text.
func resultParts(b []byte) (parts []map[string]json.RawMessage, besides string) {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil && json.Unmarshal(top["content"], &parts) == nil && len(parts) > 0 {
		if len(top) > 1 {
			others := make([]string, 0, len(top)-1)
			for k := range top {
				if k != "content" {
					others = append(others, fmt.Sprintf("%q", k))
				}
			}
			slices.Sort(others)
			besides = "its other fields (" + strings.Join(others, ", ") + ") dropped"
		}
		return parts, besides
	}
	text, _ := marshalJSON(string(b))
	return []map[string]json.RawMessage{{"type": json.RawMessage(`"text"`), "text": text}},
		"the result's JSON given as text"
}

// textHead is the longest head of s, ending on a character boundary, whose
// JSON encoding (marshalJSON's: no HTML escaping) takes at most n bytes.
func textHead(s string, n int) string {
	used := 0
	for i, r := range s {
		w := encodedRuneLen(r, s[i:])
		if used+w > n {
			return s[:i]
		}
		used += w
	}
	return s
}

// encodedTextLen is the length of s's JSON string body as marshalJSON
// writes it.
func encodedTextLen(s string) int {
	n := 0
	for i, r := range s {
		n += encodedRuneLen(r, s[i:])
	}
	return n
}

// encodedRuneLen is how many bytes encoding/json (HTML escaping off) writes
// for the rune r that starts rest.
func encodedRuneLen(r rune, rest string) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20:
		return 6 // \u00XX
	case r == '\u2028' || r == '\u2029':
		return 6
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(rest); size == 1 {
			return 6 // an invalid byte becomes \ufffd
		}
	}
	return utf8.RuneLen(r)
}
