package schema

import (
	"encoding/json"
	"strings"
)

// JSONKind names the JSON type of raw ("a string", "an object", "null"…)
// for error messages, without echoing the value.
func JSONKind(raw json.RawMessage) string {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" {
		return "nothing"
	}
	switch trimmed[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	default:
		return "a number"
	}
}
