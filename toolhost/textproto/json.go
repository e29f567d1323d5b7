package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// ParseJSON finds the {"tool_name": "…", "parameters": {…}} objects of reply.
func ParseJSON(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatJSON}})
}

// jsonWorkFactor bounds the bytes decoded while looking for JSON calls to a
// multiple of the reply's length, so crafted nesting cannot make it quadratic.
const jsonWorkFactor = 4

// frame is an open "{" or "[" during the scan.
type frame struct {
	start     int
	object    bool
	candidate bool // has a "tool_name" key of its own
}

// parseJSON finds the calls of seed 003's prompt-engineering format: JSON
// objects with a "tool_name" key and an optional "parameters" object,
// anywhere in the text (in ```json fences or not). One pass tracks the
// nesting of braces and JSON strings (strings only inside braces: prose
// quotes are not JSON), marks objects that have a "tool_name" key of their
// own, and decodes only those, outermost first: an object inside a call's
// parameters is an argument, not another call.
func parseJSON(st stripped, claimed spanSet, lines lineIndex) Result {
	text := st.text
	var res Result
	budget := jsonWorkFactor*len(text) + 4096
	var stack []frame
	// Candidates closed while an enclosing brace is still open: whether
	// they are calls or arguments of one is known only when the outermost
	// closes (its "tool_name" may come after "parameters").
	var pending []span
	inString, escaped := false, false
	strStart := -1
	keyIsToolName := false // the last string read was "tool_name" and only space followed

	decode := func(s span) bool {
		if claimed.overlaps(s.start, s.end) {
			return true // the VCP or XML parser read this text
		}
		if budget < s.end-s.start {
			off := st.toReply(s.start)
			res.Rejected = append(res.Rejected, Rejected{Format: FormatJSON, Line: lines.line(off), Offset: off,
				Reason: "not examined: the reply nests JSON calls too deeply for the parser's work bound"})
			return false
		}
		budget -= s.end - s.start
		c, why := jsonCall(text[s.start:s.end])
		off := st.toReply(s.start)
		if why != "" {
			res.Rejected = append(res.Rejected, Rejected{Format: FormatJSON, Line: lines.line(off), Reason: why, Offset: off})
			return false
		}
		c.Offset, c.Line = off, lines.line(off)
		res.Calls = append(res.Calls, c)
		return true
	}
	// flush decodes the pending candidates outermost first, skipping those
	// inside one that was a call.
	flush := func() {
		slices.SortFunc(pending, func(a, b span) int { return a.start - b.start })
		covered := -1
		for _, s := range pending {
			if s.start < covered {
				continue
			}
			if decode(s) {
				covered = s.end
			}
		}
		pending = pending[:0]
	}
	reset := func() {
		flush()
		stack = stack[:0]
		inString, escaped, keyIsToolName = false, false, false
	}

	for i := 0; i < len(text); i++ {
		ch := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
				keyIsToolName = text[strStart:i+1] == `"tool_name"`
			case ch == '\n' || ch == '\r':
				reset() // JSON strings hold no raw line breaks: this was prose
			}
			continue
		}
		switch ch {
		case ' ', '\t', '\n', '\r':
			continue // keeps keyIsToolName
		case '"':
			if len(stack) > 0 {
				inString, strStart = true, i
			}
		case ':':
			if keyIsToolName && len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].candidate = true
			}
		case '{', '[':
			stack = append(stack, frame{start: i, object: ch == '{'})
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
			if top.candidate {
				pending = append(pending, span{top.start, i + 1})
			}
			if len(stack) == 0 && len(pending) > 0 {
				flush()
			}
		}
		keyIsToolName = false
	}
	// Candidates never closed.
	for _, f := range stack {
		if f.candidate && !claimed.overlaps(f.start, f.start+1) {
			off := st.toReply(f.start)
			res.Rejected = append(res.Rejected, Rejected{Format: FormatJSON, Line: lines.line(off), Offset: off,
				Reason: `a JSON object with "tool_name" is never closed`})
		}
	}
	flush()
	return res
}

// jsonCall decodes one candidate object.
func jsonCall(obj string) (Call, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		return Call{}, fmt.Sprintf("an object with \"tool_name\" is not valid JSON: %v", err)
	}
	var tool string
	if err := json.Unmarshal(m["tool_name"], &tool); err != nil {
		return Call{}, "\"tool_name\" is not a string"
	}
	if tool == "" {
		return Call{}, "\"tool_name\" is empty"
	}
	c := Call{Format: FormatJSON, Tool: tool, Args: map[string]json.RawMessage{}}
	params, ok := m["parameters"]
	if !ok || string(params) == "null" {
		return c, ""
	}
	var args map[string]json.RawMessage
	if len(bytes.TrimSpace(params)) == 0 || params[0] != '{' || json.Unmarshal(params, &args) != nil {
		return Call{}, "\"parameters\" is not an object"
	}
	for k, v := range args {
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			v = buf.Bytes()
		}
		c.Args[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "tool_name" && k != "parameters" {
			c.Notes = append(c.Notes, fmt.Sprintf("key %q next to tool_name and parameters is ignored", k))
		}
	}
	return c, ""
}
