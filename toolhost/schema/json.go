package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ErrInvalid is behind every error of FromJSON.
var ErrInvalid = errors.New("invalid JSON Schema")

// Carriable says whether the VCP text protocol can carry name as a tool
// name or an argument key: ASCII letters, digits and _, what the server's
// parser takes (docs/vcp-parsing.md §3 rule 2: ASCII \w).
func Carriable(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !carriableByte(name[i]) {
			return false
		}
	}
	return true
}

func carriableByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// jsonSchema is the part of a JSON Schema object FromJSON reads.
type jsonSchema struct {
	Type       json.RawMessage            `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

type jsonProperty struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Title       string            `json:"title"`
	Enum        []json.RawMessage `json:"enum"`
	Default     json.RawMessage   `json:"default"`
}

// FromJSON builds a Schema from a JSON Schema object, such as an MCP
// tool's inputSchema: its properties (each with type, description, enum and
// default) in name order, required ones first, and its required list. The
// whole object is kept as Raw. A property whose type is a list (["string",
// "null"]) takes its first non-null type; one without a type accepts any
// value. A property name VCP cannot carry (outside [A-Za-z0-9_], or
// "command") gets an alias: its characters outside that set replaced by "_"
// and, when taken or "command", a "_" appended until it is free.
//
// It fails, wrapping ErrInvalid, when raw is not a JSON object, its type is
// set and is not "object", properties is not an object of objects, required
// names a property that is not declared, or a property's type is not one of
// string, integer, number, boolean, array, object.
func FromJSON(raw json.RawMessage) (*Schema, error) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalid)
	}
	var js jsonSchema
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if js.Type != nil {
		types, err := schemaTypes(js.Type)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(types, TypeObject) {
			return nil, fmt.Errorf("%w: type %s: a tool's parameters must be an object", ErrInvalid, js.Type)
		}
	}
	names := make([]string, 0, len(js.Properties))
	for n := range js.Properties {
		names = append(names, n)
	}
	required := map[string]bool{}
	for _, r := range js.Required {
		if _, ok := js.Properties[r]; !ok {
			return nil, fmt.Errorf("%w: required property %q is not declared in properties", ErrInvalid, r)
		}
		required[r] = true
	}
	// Required parameters first, each group in name order: the generated
	// description and example read best that way.
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	s := &Schema{Raw: append(json.RawMessage(nil), raw...)}
	taken := map[string]bool{CommandArg: true}
	for _, n := range names {
		taken[n] = true
	}
	for _, n := range names {
		var prop jsonProperty
		if err := json.Unmarshal(js.Properties[n], &prop); err != nil || !isObject(js.Properties[n]) {
			return nil, fmt.Errorf("%w: property %q is not a schema object", ErrInvalid, n)
		}
		p := Param{Name: n, Description: prop.Description, Required: required[n], Enum: prop.Enum}
		if p.Description == "" {
			p.Description = prop.Title
		}
		if prop.Type != nil {
			types, err := schemaTypes(prop.Type)
			if err != nil {
				return nil, fmt.Errorf("property %q: %w", n, err)
			}
			if len(types) > 0 {
				p.Type = types[0]
			}
		}
		if prop.Default != nil && !isNull(prop.Default) {
			p.Default = prop.Default
		}
		if !Carriable(n) || n == CommandArg {
			p.Alias = aliasFor(n, taken)
			taken[p.Alias] = true
		}
		s.Params = append(s.Params, p)
	}
	return s, nil
}

// schemaTypes reads a "type" value: a name or a list of names, "null" left out.
func schemaTypes(raw json.RawMessage) ([]Type, error) {
	var names []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		names = []string{one}
	} else if err := json.Unmarshal(raw, &names); err != nil {
		return nil, fmt.Errorf("%w: type %s is neither a type name nor a list of them", ErrInvalid, raw)
	}
	var out []Type
	for _, n := range names {
		t := Type(n)
		switch t {
		case TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray, TypeObject:
			out = append(out, t)
		case "null":
		default:
			return nil, fmt.Errorf("%w: type %q is not one of string, integer, number, boolean, array, object", ErrInvalid, n)
		}
	}
	return out, nil
}

func isObject(raw json.RawMessage) bool {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	return len(raw) > 0 && raw[0] == '{'
}

// aliasFor makes a VCP-safe argument name for the property n.
func aliasFor(n string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range n {
		if r < 128 && carriableByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	a := b.String()
	for taken[a] {
		a += "_"
	}
	return a
}
