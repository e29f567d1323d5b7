package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Doc is the line that teaches a model p: its wire name, type, whether it
// is required, its default and allowed values, its description, and its
// own name when the model must write an alias, as in
//
//	mode (string, optional, default "fit", one of "fit", "fill"): how to resize
func (p Param) Doc() string {
	var b strings.Builder
	b.WriteString(p.WireName())
	b.WriteString(" (")
	b.WriteString(typeText(p.Type))
	if p.Required {
		b.WriteString(", required")
	} else {
		b.WriteString(", optional")
	}
	if p.Default != nil {
		fmt.Fprintf(&b, ", default %s", compactJSON(p.Default))
	}
	if len(p.Enum) > 0 {
		fmt.Fprintf(&b, ", one of %s", enumText(p.Enum))
	}
	b.WriteString(")")
	if d := strings.TrimSpace(p.Description); d != "" {
		b.WriteString(": ")
		b.WriteString(strings.Join(strings.Fields(d), " "))
	}
	if p.Alias != "" && p.Alias != p.Name {
		fmt.Fprintf(&b, " (the parameter %q)", p.Name)
	}
	return b.String()
}

// Example is the value an example call writes for p: its default, its
// first allowed value, or a placeholder of its type.
func (p Param) Example() string {
	v := p.Default
	if v == nil && len(p.Enum) > 0 {
		v = p.Enum[0]
	}
	if v != nil {
		if s, ok := StringValue(v); ok {
			return s
		}
		return compactJSON(v)
	}
	switch p.Type {
	case TypeInteger:
		return "1"
	case TypeNumber:
		return "1.5"
	case TypeBoolean:
		return "true"
	case TypeArray:
		return `["a", "b"]`
	case TypeObject:
		return `{"key": "value"}`
	}
	return "<" + p.WireName() + ">"
}

func typeText(t Type) string {
	if t == "" {
		return "any type"
	}
	return string(t)
}

func enumText(enum []json.RawMessage) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = string(e)
	}
	return strings.Join(parts, ", ")
}

// compactJSON writes raw on one line, without HTML escaping ("<" stays
// "<", as the model reads it); raw itself when it is not valid JSON.
func compactJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}
