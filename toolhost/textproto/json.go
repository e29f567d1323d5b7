package textproto

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ParseJSON finds the {"tool_name": "…", "parameters": {…}} objects of reply.
func ParseJSON(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatJSON}})
}

// ParseToolCalls finds the {"tool_calls": […]} objects of reply.
func ParseToolCalls(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatToolCalls}})
}

// jsonWorkFactor bounds the bytes decoded while looking for JSON calls to a
// multiple of the reply's length, so crafted nesting cannot make it quadratic.
const jsonWorkFactor = 4

// The keys that make a JSON object a call candidate, and their formats.
var jsonKeys = map[string]Format{"tool_name": FormatJSON, "tool_calls": FormatToolCalls}

// frame is an open "{" or "[" during the scan.
type frame struct {
	start  int
	object bool
	kind   Format // the format of a key of its own that makes it a candidate
}

// candidate is a closed object with a call key.
type candidate struct {
	span
	kind Format
}

// jsonScanner finds the call objects of DeepChat's prompt-engineering
// format ({"tool_name", "parameters"}) and the JSON_Strict format
// ({"tool_calls": [{"function": {"name", "arguments"}}…]}) anywhere in the
// text (in ```json fences or not). One pass tracks the nesting of braces,
// strings (double- or single-quoted, only inside braces: prose quotes are
// not JSON) and comments, marks objects with a call key of their own
// (quoted or not), and decodes only those, outermost first: an object
// inside a call's arguments is an argument, not another call. A candidate
// that is not strict JSON is mended (decodeTolerant) and marked repaired.
type jsonScanner struct {
	st      stripped
	lines   lineIndex
	claimed spanSet
	formats []Format
	res     Result
	budget  int
}

func parseJSON(st stripped, formats []Format, claimed spanSet, lines lineIndex) Result {
	s := &jsonScanner{st: st, lines: lines, claimed: claimed, formats: formats, budget: jsonWorkFactor*len(st.text) + 4096}
	text := st.text
	var stack []frame
	// Candidates closed while an enclosing brace is still open: whether
	// they are calls or arguments of one is known only when the outermost
	// closes (its "tool_name" may come after "parameters").
	var pending []candidate
	var quote byte // the open string's quote, 0 outside strings
	escaped := false
	strStart := -1
	lastKey := Format("") // the last string or bare word was a call key, and only space followed
	keyPos := false       // after "{" or "," (and space): where an unquoted key may stand

	flush := func() {
		slices.SortFunc(pending, func(a, b candidate) int { return a.start - b.start })
		covered := -1
		for _, c := range pending {
			if c.start < covered {
				continue
			}
			if s.decode(c, "") {
				covered = c.end
			}
		}
		pending = pending[:0]
	}
	reset := func() {
		flush()
		stack = stack[:0]
		quote, escaped, lastKey = 0, false, ""
	}

	for i := 0; i < len(text); i++ {
		ch := text[i]
		if quote != 0 {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == quote:
				quote = 0
				lastKey = jsonKeys[text[strStart+1:i]]
			case ch == '\n' || ch == '\r':
				if quote == '\'' {
					// An apostrophe in prose, not a string: read on after it.
					// No quote follows on this line, so this rewinds once per line.
					quote, escaped, i = 0, false, strStart
					continue
				}
				// JSON strings hold no raw line breaks: this was prose, or a
				// call whose string never closes. Such a call is mended, as
				// inside a tag, or rejected; either way it is never missed.
				if fi := outermostCandidate(stack); fi >= 0 {
					f := stack[fi]
					if netClosers(text[strStart+1:i]) < len(stack)-fi {
						// The object goes on after this line: a raw line
						// break inside a string, which the repair escapes.
						continue
					}
					// The string swallowed the brackets that close the call.
					broken := fmt.Sprintf("a string opened on line %d never closes before its line break", s.lines.line(s.st.toReply(strStart)))
					if s.decode(candidate{span{f.start, i}, f.kind}, broken) {
						pending = slices.DeleteFunc(pending, func(c candidate) bool { return c.start >= f.start })
					}
				}
				reset()
			}
			continue
		}
		switch ch {
		case ' ', '\t', '\n', '\r':
			continue // keeps lastKey and keyPos
		case '"', '\'':
			if len(stack) > 0 {
				quote, strStart = ch, i
			}
		case '/':
			// Comments inside braces: // to the end of the line, /* to */.
			if len(stack) > 0 && i+1 < len(text) && (text[i+1] == '/' || text[i+1] == '*') {
				end := "\n"
				if text[i+1] == '*' {
					end = "*/"
				}
				j := strings.Index(text[i+2:], end)
				if j < 0 {
					i = len(text)
				} else {
					i += 2 + j + len(end) - 1
				}
				continue // keeps lastKey and keyPos
			}
		case ':':
			if lastKey != "" && len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].kind = lastKey
			}
		case '{', '[':
			stack = append(stack, frame{start: i, object: ch == '{'})
			lastKey, keyPos = "", ch == '{'
			continue
		case ',':
			lastKey, keyPos = "", true
			continue
		case '}', ']':
			if len(stack) == 0 {
				break
			}
			top := stack[len(stack)-1]
			if top.object != (ch == '}') {
				reset() // mismatched brackets: not JSON
				break
			}
			stack = stack[:len(stack)-1]
			if top.kind != "" {
				pending = append(pending, candidate{span{top.start, i + 1}, top.kind})
			}
			if len(stack) == 0 && len(pending) > 0 {
				flush()
			}
		default:
			if len(stack) > 0 && isBareKeyByte(ch) {
				// An unquoted word: a key only where a key may stand.
				j := i
				for j < len(text) && isBareKeyByte(text[j]) {
					j++
				}
				lastKey = ""
				if keyPos {
					lastKey = jsonKeys[text[i:j]]
				}
				i, keyPos = j-1, false
				continue
			}
		}
		lastKey, keyPos = "", false
	}
	// Candidates never closed.
	for _, f := range stack {
		if f.kind != "" && slices.Contains(s.formats, f.kind) && !claimed.overlaps(f.start, f.start+1) {
			reason := fmt.Sprintf("a JSON object with %q is never closed", keyOf(f.kind))
			if quote != 0 && strStart > f.start {
				reason += fmt.Sprintf(" (a string opened on line %d runs to the end of the reply)", s.lines.line(s.st.toReply(strStart)))
			}
			s.reject(f.start, f.kind, reason)
		}
	}
	flush()
	return s.res
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func keyOf(f Format) string {
	for k, v := range jsonKeys {
		if v == f {
			return k
		}
	}
	return ""
}

func (s *jsonScanner) reject(at int, f Format, reason string) {
	off := s.st.toReply(at)
	s.res.Rejected = append(s.res.Rejected, Rejected{Format: f, Line: s.lines.line(off), Reason: reason, Offset: off})
}

// outermostCandidate is the index of the outermost open frame with a call
// key, or -1.
func outermostCandidate(stack []frame) int {
	for i, f := range stack {
		if f.kind != "" {
			return i
		}
	}
	return -1
}

// netClosers is how many more closing than opening brackets s holds.
func netClosers(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '}', ']':
			n++
		case '{', '[':
			n--
		}
	}
	return n
}

// decode decodes one candidate; true when it was a call (so what it holds
// is arguments, not more calls). broken, when not empty, says why the
// candidate is not the whole object as written: its call is marked
// repaired with that note, its rejection gives it as the reason's cause.
func (s *jsonScanner) decode(c candidate, broken string) bool {
	if s.claimed.overlaps(c.start, c.end) {
		return true // another format's parser read this text
	}
	if !slices.Contains(s.formats, c.kind) {
		return false
	}
	if s.budget < c.end-c.start {
		s.reject(c.start, c.kind, "not examined: the reply nests JSON calls too deeply for the parser's work bound")
		return false
	}
	s.budget -= c.end - c.start
	var calls []Call
	var why string
	if c.kind == FormatToolCalls {
		calls, why = toolCallsObject(s.st.text[c.start:c.end])
	} else {
		var call Call
		call, why = jsonCall(s.st.text[c.start:c.end])
		calls = []Call{call}
	}
	if why != "" {
		if broken != "" {
			why = fmt.Sprintf("%s: %s", broken, why)
		}
		s.reject(c.start, c.kind, why)
		return false
	}
	off := s.st.toReply(c.start)
	for _, call := range calls {
		call.Offset, call.Line = off, s.lines.line(off)
		if broken != "" {
			call.Repaired = true
			call.Notes = append(call.Notes, broken+"; the call was mended")
		}
		s.res.Calls = append(s.res.Calls, call)
	}
	return true
}

// jsonCall decodes one {"tool_name", "parameters"} candidate.
func jsonCall(obj string) (Call, string) {
	v, repaired, err := decodeTolerant(obj)
	if err != nil {
		return Call{}, fmt.Sprintf("an object with \"tool_name\" is %v", err)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return Call{}, "an object with \"tool_name\" is not an object once repaired"
	}
	var tool string
	if err := json.Unmarshal(m["tool_name"], &tool); err != nil {
		return Call{}, "\"tool_name\" is not a string"
	}
	if tool == "" {
		return Call{}, "\"tool_name\" is empty"
	}
	args, argsRepaired, why := objectArgs(m["parameters"], "parameters")
	if why != "" {
		return Call{}, why
	}
	c := Call{Format: FormatJSON, Tool: tool, Args: args, Repaired: repaired || argsRepaired}
	idKey := firstKey(m, "request_id", "id")
	if idKey != "" && json.Unmarshal(m[idKey], &c.ID) != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%q is not a string and is ignored", idKey))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "tool_name" && k != "parameters" && k != idKey {
			c.Notes = append(c.Notes, fmt.Sprintf("key %q next to tool_name and parameters is ignored", k))
		}
	}
	return c, ""
}

// toolCallsObject decodes one {"tool_calls": […]} candidate: each entry is
// OpenAI's {"id", "type": "function", "function": {"name", "arguments"}}
// (arguments an object or a string holding one), or the same without the
// "function" wrapper. One bad entry rejects the whole object: the calls of
// one turn are run together or not at all.
func toolCallsObject(obj string) ([]Call, string) {
	v, repaired, err := decodeTolerant(obj)
	if err != nil {
		return nil, fmt.Sprintf("an object with \"tool_calls\" is %v", err)
	}
	var m struct {
		ToolCalls json.RawMessage `json:"tool_calls"`
	}
	var entries []json.RawMessage
	if json.Unmarshal(v, &m) != nil || json.Unmarshal(m.ToolCalls, &entries) != nil || len(m.ToolCalls) == 0 || m.ToolCalls[0] != '[' {
		return nil, "\"tool_calls\" is not an array"
	}
	if len(entries) == 0 {
		return nil, "\"tool_calls\" is empty"
	}
	calls := make([]Call, 0, len(entries))
	for i, e := range entries {
		var entry struct {
			ID       json.RawMessage `json:"id"`
			Function json.RawMessage `json:"function"`
		}
		_ = json.Unmarshal(e, &entry) // nameArgsCall says what is wrong with a non-object
		body := e
		if len(entry.Function) > 0 && string(entry.Function) != "null" {
			body = entry.Function
		}
		c, why := nameArgsCall(body, FormatToolCalls)
		if why != "" {
			return nil, fmt.Sprintf("tool_calls[%d] %s", i, why)
		}
		var id string
		if json.Unmarshal(entry.ID, &id) == nil {
			c.ID = id
		}
		c.Repaired = c.Repaired || repaired
		calls = append(calls, c)
	}
	return calls, ""
}
