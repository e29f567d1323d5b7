package textproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kaptinlin/jsonrepair"
)

// Bounds on what tolerant decoding hands to the repair library: it is a
// recursive-descent parser over runes, so deep nesting costs stack and a
// huge payload costs time; neither is a call a model writes.
const (
	maxRepairBytes = 256 << 10
	maxRepairDepth = 256
)

var errNotRepairable = errors.New("not JSON, and not JSON the repair library can mend")

// decodeTolerant decodes s as JSON, or, when that fails, as the JSON a
// model meant (single quotes, trailing commas, unquoted keys, comments,
// Python constants, code fences…) mended by the jsonrepair library.
// repaired tells which happened; v is compact JSON either way.
func decodeTolerant(s string) (v json.RawMessage, repaired bool, err error) {
	s = strings.TrimSpace(s)
	if json.Valid([]byte(s)) {
		return compactJSON(s), false, nil
	}
	if inner, ok := unfence(s); ok && json.Valid([]byte(inner)) {
		return compactJSON(inner), false, nil
	}
	if len(s) > maxRepairBytes {
		return nil, false, fmt.Errorf("not valid JSON, and at %d bytes too large to repair (the bound is %d)", len(s), maxRepairBytes)
	}
	if nestingDepth(s) > maxRepairDepth {
		return nil, false, fmt.Errorf("not valid JSON, and nested deeper than %d levels to repair", maxRepairDepth)
	}
	r, rerr := jsonrepair.Repair(s)
	if rerr != nil || !json.Valid([]byte(r)) {
		return nil, false, errNotRepairable
	}
	return compactJSON(r), true, nil
}

// unfence strips a Markdown code fence around s.
func unfence(s string) (string, bool) {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return "", false
	}
	inner := s[3 : len(s)-3]
	if nl := strings.IndexByte(inner, '\n'); nl >= 0 && !strings.ContainsAny(inner[:nl], "{[\"'") {
		inner = inner[nl+1:] // the info string (```json)
	}
	return strings.TrimSpace(inner), true
}

// nestingDepth is the deepest bracket nesting of s, strings not told apart:
// an upper bound good enough to keep the repair library's recursion short.
func nestingDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth = max(0, depth-1)
		}
	}
	return deepest
}

// compactJSON compacts valid JSON, keeping <, > and & readable.
func compactJSON(s string) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) != nil {
		return json.RawMessage(s)
	}
	return buf.Bytes()
}

// objectArgs reads a call's arguments: an object (or null / absent: no
// arguments), or a string holding one, as OpenAI's function.arguments
// does. repaired is true when the string needed mending.
func objectArgs(raw json.RawMessage, field string) (args map[string]json.RawMessage, repaired bool, why string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]json.RawMessage{}, false, ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, fmt.Sprintf("%q is not a string", field)
		}
		if strings.TrimSpace(s) == "" {
			return map[string]json.RawMessage{}, false, ""
		}
		v, rep, err := decodeTolerant(s)
		if err != nil {
			return nil, false, fmt.Sprintf("%q is a string that is %v", field, err)
		}
		raw, repaired = v, rep
	}
	if raw[0] != '{' {
		return nil, false, fmt.Sprintf("%q is not an object", field)
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, false, fmt.Sprintf("%q is not an object: %v", field, err)
	}
	for k, v := range args {
		args[k] = compactJSON(string(v))
	}
	return args, repaired, ""
}
