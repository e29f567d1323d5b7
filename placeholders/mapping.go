package placeholders

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MapOutput turns what a source printed into values for its declared keys,
// as the official node (VCPDistributedServer) maps a static plugin's
// output. declared are the keys as the source writes them ("{{Name}}" or
// "Name"); the result is keyed by their normalised form. It returns nil
// when there is nothing to set, so every key keeps its previous value.
//
// When the trimmed output is a JSON object holding a key spelled exactly as
// declared (braces included or not, as written) with a value JavaScript
// deems true, that entry feeds the placeholder: a string as it is, anything
// else JSON-encoded (a fold object inside stays a fold object for the
// server). Every other placeholder gets the whole output — plain text, a
// fold object, or a JSON map keyed some other way — which is also what
// VCPToolBox gives every placeholder of a static plugin.
func MapOutput(declared []string, output string) map[string]string {
	text := strings.TrimSpace(output)
	if text == "" || len(declared) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if text[0] != '{' || json.Unmarshal([]byte(text), &obj) != nil {
		obj = nil
	}
	values := make(map[string]string, len(declared))
	for _, written := range declared {
		k, err := NormalizeKey(written)
		if err != nil {
			continue
		}
		v := text
		if raw, ok := obj[strings.TrimSpace(written)]; ok && jsTruthy(raw) {
			v = jsonValueText(raw)
		}
		if v != "" {
			values[k] = v
		}
	}
	if len(values) == 0 {
		return nil
	}
	return values
}

// jsTruthy reports whether JavaScript deems the JSON value raw true: every
// value but null, false, 0 and "".
func jsTruthy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0, string(raw) == "null", string(raw) == "false", string(raw) == `""`:
		return false
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		var f float64
		return json.Unmarshal(raw, &f) != nil || f != 0
	}
	return true
}

// jsonValueText renders one entry of a per-key map: a string trimmed, any
// other value as compact JSON.
func jsonValueText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return "" // cannot happen: raw came out of a successful Unmarshal
	}
	return compact.String()
}
