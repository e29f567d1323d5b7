package textproto

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The tag-wrapped JSON formats: the XML_Tag strategy
// (<tool_code>{"name": …, "arguments": {…}}</tool_code>) and DeepChat's
// prompt-engineering <function_call> block of the same shape.
var taggedFormats = map[Format]string{
	FormatToolCode:     "tool_code",
	FormatFunctionCall: "function_call",
}

// ParseToolCode finds the <tool_code> blocks of reply.
func ParseToolCode(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatToolCode}})
}

// ParseFunctionCall finds the <function_call> blocks of reply.
func ParseFunctionCall(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatFunctionCall}})
}

// parseTagged reads every <TAG>payload</TAG> of one tagged format outside
// claimed text. The payload is one call object or an array of them, in
// JSON or JSON a model meant (decodeTolerant); a code fence around it is
// allowed. An open tag without its close before the next open tag, or
// before the end of the reply, is rejected and reading goes on after it.
func parseTagged(st stripped, f Format, claimed spanSet, lines lineIndex) (Result, []span) {
	tag := taggedFormats[f]
	open, closing := "<"+tag, "</"+tag+">"
	text := st.text
	var res Result
	var spans []span
	reject := func(at int, reason string) {
		off := st.toReply(at)
		res.Rejected = append(res.Rejected, Rejected{Format: f, Line: lines.line(off), Reason: reason, Offset: off})
	}
	nextOpen := literal(text, open)
	nextClose := literal(text, closing)
	for pos := 0; pos < len(text); {
		b, _ := nextOpen.next(pos)
		if b < 0 {
			break
		}
		pos = b + len(open)
		if !hasTag(text, b, open) || claimed.overlaps(b, b+len(open)) {
			continue
		}
		_, bodyStart, selfClosed, ok := readAttrs(text, pos)
		if !ok || selfClosed {
			if ok {
				reject(b, fmt.Sprintf("<%s/> holds no call", tag))
			}
			continue
		}
		e, _ := nextClose.next(bodyStart)
		following := nextTag(nextOpen, text, open, bodyStart)
		if e < 0 || (following >= 0 && following < e) {
			reject(b, fmt.Sprintf("<%s> is never closed by %s; its call is not run", tag, closing))
			pos = bodyStart
			continue
		}
		end := e + len(closing)
		spans = append(spans, span{b, end})
		pos = end
		off := st.toReply(b)
		calls, why := taggedCalls(text[bodyStart:e], f)
		if why != "" {
			reject(b, fmt.Sprintf("<%s> %s", tag, why))
			continue
		}
		for _, c := range calls {
			c.Offset, c.Line = off, lines.line(off)
			res.Calls = append(res.Calls, c)
		}
	}
	return res, spans
}

// nextTag is the next real open tag (not a longer name such as
// <tool_code_x>) at or after from, or -1.
func nextTag(f *finder, text, open string, from int) int {
	for {
		i, _ := f.next(from)
		if i < 0 || hasTag(text, i, open) {
			return i
		}
		from = i + 1
	}
}

// taggedCalls decodes a tag's payload.
func taggedCalls(payload string, f Format) ([]Call, string) {
	if strings.TrimSpace(payload) == "" {
		return nil, "is empty"
	}
	v, repaired, err := decodeTolerant(payload)
	if err != nil {
		return nil, fmt.Sprintf("does not hold JSON: %v", err)
	}
	var objs []json.RawMessage
	switch v[0] {
	case '[':
		if json.Unmarshal(v, &objs) != nil || len(objs) == 0 {
			return nil, "holds an empty or mixed array, not call objects"
		}
	case '{':
		objs = []json.RawMessage{v}
	default:
		return nil, "holds JSON that is not a call object"
	}
	calls := make([]Call, 0, len(objs))
	for i, o := range objs {
		c, why := nameArgsCall(o, f)
		if why != "" {
			if len(objs) > 1 {
				why = fmt.Sprintf("call %d of %d: %s", i+1, len(objs), why)
			}
			return nil, why
		}
		c.Repaired = c.Repaired || repaired
		calls = append(calls, c)
	}
	return calls, ""
}

// nameArgsCall reads a {"name": …, "arguments": …} object ("parameters"
// and "tool_name" are taken as the same keys); arguments may be an object
// or a string holding one.
func nameArgsCall(raw json.RawMessage, f Format) (Call, string) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return Call{}, "is not a call object"
	}
	nameKey := firstKey(m, "name", "tool_name")
	if nameKey == "" {
		return Call{}, `has no "name"`
	}
	var tool string
	if json.Unmarshal(m[nameKey], &tool) != nil {
		return Call{}, fmt.Sprintf("%q is not a string", nameKey)
	}
	if strings.TrimSpace(tool) == "" {
		return Call{}, fmt.Sprintf("%q is empty", nameKey)
	}
	argsKey := firstKey(m, "arguments", "parameters")
	args, repaired, why := objectArgs(m[argsKey], argsKey)
	if why != "" {
		return Call{}, why
	}
	c := Call{Format: f, Tool: strings.TrimSpace(tool), Args: args, Repaired: repaired}
	idKey := firstKey(m, "id", "request_id")
	if idKey != "" && json.Unmarshal(m[idKey], &c.ID) != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("%q is not a string and is ignored", idKey))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != nameKey && k != argsKey && k != idKey && k != "type" {
			c.Notes = append(c.Notes, fmt.Sprintf("key %q next to %s and %s is ignored", k, nameKey, orDefault(argsKey, "arguments")))
		}
	}
	return c, ""
}

// firstKey is the first of keys that m has, or "".
func firstKey(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return k
		}
	}
	return ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
