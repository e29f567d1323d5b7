package placeholders

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MapOutput turns what a source printed into values for its declared keys
// (normalised, "{{Name}}"). It returns nil when there is nothing to set, so
// every key keeps its previous value.
//
// When the trimmed output is a JSON object whose keys all name declared
// placeholders (braces optional), each key feeds its own placeholder: a
// string as it is, anything else JSON-encoded; a null or empty entry keeps
// that key's previous value. Any other output — plain text, a fold object,
// a JSON object with a key nobody declared — is one value for every declared
// key, as the official hosts do.
func MapOutput(declared []string, output string) map[string]string {
	text := strings.TrimSpace(output)
	if text == "" || len(declared) == 0 {
		return nil
	}
	if values, ok := mapJSONObject(declared, text); ok {
		if len(values) == 0 {
			return nil
		}
		return values
	}
	values := make(map[string]string, len(declared))
	for _, k := range declared {
		values[k] = text
	}
	return values
}

// mapJSONObject applies the per-key form when text qualifies for it.
func mapJSONObject(declared []string, text string) (map[string]string, bool) {
	if text[0] != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || len(obj) == 0 {
		return nil, false
	}
	isDeclared := make(map[string]bool, len(declared))
	for _, k := range declared {
		isDeclared[k] = true
	}
	values := make(map[string]string, len(obj))
	seen := make(map[string]bool, len(obj))
	for name, raw := range obj {
		k, err := NormalizeKey(name)
		if err != nil || !isDeclared[k] || seen[k] {
			// An undeclared key, or "X" and "{{X}}" side by side: this is
			// not a per-key map but a value in its own right.
			return nil, false
		}
		seen[k] = true
		if v, ok := jsonValueText(raw); ok {
			values[k] = v
		}
	}
	return values, true
}

// jsonValueText renders one entry of a per-key map; false means "no value".
func jsonValueText(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		s = strings.TrimSpace(s)
		return s, s != ""
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", false
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "", false // cannot happen: raw came out of a successful Unmarshal
	}
	return compact.String(), true
}
