package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// ErrBadSchema: an MCP tool's inputSchema cannot be turned into parameters.
// The tool is left out of the server's command list with a warning; the
// server's other tools are still offered.
var ErrBadSchema = errors.New("invalid inputSchema")

// convertSchema turns an MCP tool's inputSchema (as the SDK client decodes
// it: a map, or anything that marshals to a JSON object) into the
// toolhost.Schema the node checks and coerces against. Names the VCP text protocol cannot carry
// get an alias. The tool's description goes into Raw as the schema's
// top-level "description" when the schema has none, so generated
// invocation text can show it.
func convertSchema(description string, input any) (*toolhost.Schema, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	if input == nil || string(raw) == "null" {
		// Some servers omit the schema of an argument-less tool.
		raw = []byte(`{"type":"object"}`)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadSchema)
	}
	if t, ok := top["type"]; ok {
		var typ string
		if json.Unmarshal(t, &typ) != nil || typ != "object" {
			return nil, fmt.Errorf("%w: type is %s, not \"object\"", ErrBadSchema, clip(string(t), 40))
		}
	}
	required := map[string]bool{}
	if r, ok := top["required"]; ok && !isNull(r) {
		var names []string
		if err := json.Unmarshal(r, &names); err != nil {
			return nil, fmt.Errorf("%w: required is not an array of names", ErrBadSchema)
		}
		for _, n := range names {
			required[n] = true
		}
	}
	names, props, err := orderedObject(top["properties"])
	if err != nil {
		return nil, fmt.Errorf("%w: properties: %v", ErrBadSchema, err)
	}
	s := &toolhost.Schema{}
	for i, name := range names {
		p, err := convertParam(name, props[i])
		if err != nil {
			return nil, fmt.Errorf("%w: property %q: %v", ErrBadSchema, name, err)
		}
		p.Required = required[name]
		s.Params = append(s.Params, p)
	}
	// The SDK client decodes the schema into a map, so the server's order
	// of properties is lost: required parameters come first, each group
	// in name order, which reads well in generated invocation text.
	slices.SortStableFunc(s.Params, func(a, b toolhost.Param) int {
		switch {
		case a.Required == b.Required:
			return 0
		case a.Required:
			return -1
		default:
			return 1
		}
	})
	assignAliases(s.Params)
	if _, has := top["description"]; !has && strings.TrimSpace(description) != "" {
		top["description"], _ = json.Marshal(description)
	}
	s.Raw, err = json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	return s, nil
}

// propSchema is the part of a property's schema the node uses.
type propSchema struct {
	Type        json.RawMessage   `json:"type"`
	Description json.RawMessage   `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Default     json.RawMessage   `json:"default"`
}

func convertParam(name string, raw json.RawMessage) (toolhost.Param, error) {
	var ps propSchema
	if err := json.Unmarshal(raw, &ps); err != nil {
		return toolhost.Param{}, errors.New("its schema is not a JSON object")
	}
	p := toolhost.Param{Name: name, Enum: ps.Enum}
	if len(ps.Description) > 0 && !isNull(ps.Description) {
		if err := json.Unmarshal(ps.Description, &p.Description); err != nil {
			return toolhost.Param{}, errors.New("description is not a string")
		}
	}
	if len(ps.Default) > 0 {
		p.Default = ps.Default
	}
	typ, err := paramType(ps.Type)
	if err != nil {
		return toolhost.Param{}, err
	}
	p.Type = typ
	return p, nil
}

// paramType reads "type": a name, or a list of names of which the first
// that is not "null" counts (["string","null"] is a nullable string). No
// type (anyOf, $ref…) leaves Type empty: any JSON value is passed on.
func paramType(raw json.RawMessage) (toolhost.ParamType, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	var names []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		names = []string{one}
	} else if err := json.Unmarshal(raw, &names); err != nil {
		return "", fmt.Errorf("type %s is neither a name nor a list of names", clip(string(raw), 40))
	}
	for _, n := range names {
		switch t := toolhost.ParamType(n); t {
		case toolhost.TypeString, toolhost.TypeInteger, toolhost.TypeNumber,
			toolhost.TypeBoolean, toolhost.TypeArray, toolhost.TypeObject:
			return t, nil
		case "null":
		default:
			return "", fmt.Errorf("unknown type %q", n)
		}
	}
	return "", nil
}

// orderedObject splits a JSON object into its keys, in order, and values.
// Absent or null is an empty object.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var vals []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if seen[key] {
			return nil, nil, fmt.Errorf("%q appears twice", key)
		}
		seen[key] = true
		keys, vals = append(keys, key), append(vals, v)
	}
	return keys, vals, nil
}

// carriable says whether the VCP text protocol can carry name as an
// argument key: the server's parser takes keys matching [\w_]+ (ASCII), and
// "command" selects the command of a multi-command tool.
func carriable(name string) bool {
	if name == "" || name == commandArg {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// assignAliases gives every parameter whose name cannot be carried an alias
// that can, distinct from every other name and alias of the command.
func assignAliases(params []toolhost.Param) {
	taken := map[string]bool{commandArg: true}
	for _, p := range params {
		taken[p.Name] = true
	}
	for i := range params {
		if carriable(params[i].Name) {
			continue
		}
		base := aliasBase(params[i].Name)
		alias := base
		for n := 2; taken[alias]; n++ {
			alias = base + "_" + strconv.Itoa(n)
		}
		taken[alias] = true
		params[i].Alias = alias
	}
}

func aliasBase(name string) string {
	if name == commandArg {
		return "command_arg"
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		return "arg"
	}
	return s
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// clip shortens s for an error message.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
