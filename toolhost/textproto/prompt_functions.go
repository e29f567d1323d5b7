package textproto

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// Function is one tool as OpenAI-style function calling and the XML
// format's <functions> block describe it.
type Function struct {
	// The field order is the XML format's.
	Description string          `json:"description"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Functions describes specs as functions: the description is the tool's
// description followed by each command's own (a typed command's generated
// text is left out: its parameters are in the schema), and the parameters
// are a JSON Schema: the source's own for a tool with one typed command;
// otherwise the typed commands' parameters, the names an untyped command's
// example passes (as strings), and for several commands a "command"
// property that tells them apart, each command's required parameters
// kept in an anyOf branch of its own.
func Functions(specs []toolhost.Spec) ([]Function, error) {
	out := make([]Function, 0, len(specs))
	for _, s := range specs {
		params, err := ParametersSchema(s)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", s.Name, err)
		}
		out = append(out, Function{Name: s.Name, Description: functionDescription(s), Parameters: params})
	}
	return out, nil
}

func functionDescription(s toolhost.Spec) string {
	parts := []string{}
	if d := strings.TrimSpace(s.Description); d != "" {
		parts = append(parts, d)
	}
	for _, c := range s.Commands {
		// A typed command's parameters are in the schema; only a
		// description its source wrote says more.
		d := strings.TrimSpace(c.Description)
		if d == "" && c.Schema != nil && (len(s.Commands) > 1 || len(parts) == 0) {
			d = rawDescription(c.Schema.Raw) // an MCP tool's own description
		}
		if d == "" {
			continue
		}
		if len(s.Commands) > 1 && c.Command != "" {
			d = "Command " + c.Command + ": " + d
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, "\n")
}

// rawDescription is the top-level "description" of a JSON Schema.
func rawDescription(raw json.RawMessage) string {
	var top struct {
		Description string `json:"description"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &top) != nil {
		return ""
	}
	return strings.TrimSpace(top.Description)
}

// jsonSchemaObject is the JSON Schema written for Params.
type jsonSchemaObject struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required,omitempty"`
	AnyOf      []commandBranch            `json:"anyOf,omitempty"`
}

// commandBranch is one command's own required parameters.
type commandBranch struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

type jsonSchemaProp struct {
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
	Const       json.RawMessage   `json:"const,omitempty"`
}

// ParametersSchema is the JSON Schema of s's arguments, as Functions
// describes it; every format that states a tool's parameters (the prompt
// formats, `vcpnode mcp`) takes it from here.
func ParametersSchema(s toolhost.Spec) (json.RawMessage, error) {
	if len(s.Commands) == 1 && s.Commands[0].Schema != nil && len(s.Commands[0].Schema.Raw) > 0 {
		return compact(s.Commands[0].Schema.Raw)
	}
	obj := jsonSchemaObject{Type: "object", Properties: map[string]json.RawMessage{}}
	multi := len(s.Commands) > 1
	if multi {
		var names []json.RawMessage
		for _, c := range s.Commands {
			if c.Command != "" {
				names = append(names, stringJSON(c.Command))
			}
		}
		b, err := marshal(jsonSchemaProp{Type: "string", Description: "which command to run", Enum: names})
		if err != nil {
			return nil, err
		}
		obj.Properties[schema.CommandArg] = b
		obj.Required = append(obj.Required, schema.CommandArg)
	}
	branches, anyRequired := []commandBranch{}, false
	for _, c := range s.Commands {
		var required []string
		for _, p := range commandParams(c) {
			if p.Required && !slices.Contains(required, p.Name) {
				required = append(required, p.Name)
			}
			if _, seen := obj.Properties[p.Name]; seen {
				continue
			}
			b, err := marshal(jsonSchemaProp{Type: string(p.Type), Description: p.Description, Enum: p.Enum, Default: p.Default})
			if err != nil {
				return nil, err
			}
			obj.Properties[p.Name] = b
		}
		if !multi {
			obj.Required = append(obj.Required, required...)
			continue
		}
		anyRequired = anyRequired || len(required) > 0
		if c.Command != "" {
			branches = append(branches, commandBranch{
				Properties: map[string]json.RawMessage{schema.CommandArg: mustMarshal(jsonSchemaProp{Const: stringJSON(c.Command)})},
				Required:   append([]string{schema.CommandArg}, required...),
			})
		}
	}
	if anyRequired {
		obj.AnyOf = branches
	}
	return marshal(obj)
}

// commandParams are c's parameters: its schema's, or for an untyped
// command the names its example passes, as optional strings (a VCP
// plugin declares no types; every value it gets is text).
func commandParams(c toolhost.Command) []schema.Param {
	if c.Schema != nil {
		return c.Schema.Params
	}
	var out []schema.Param
	for _, name := range exampleArgs(c.Example) {
		if name != schema.CommandArg || c.Command == "" {
			out = append(out, schema.Param{Name: name, Type: schema.TypeString})
		}
	}
	return out
}

// exampleArgs are the argument names of the VCP calls in an invocation
// example, in order of appearance; an example that shows the fields
// without the block markers is read as one block.
func exampleArgs(example string) []string {
	var names []string
	for _, c := range exampleCalls(example) {
		for _, k := range sortedArgNames(c) {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	return names
}

// exampleCalls are the VCP calls of an invocation example; an example that
// shows the fields without the block markers is read as one block.
func exampleCalls(example string) []Call {
	if strings.TrimSpace(example) == "" {
		return nil
	}
	calls := Parse(example, Options{Formats: []Format{FormatVCP}}).Calls
	if len(calls) == 0 {
		calls = Parse(blockStart+"\ntool_name:"+valueStart+"x"+valueEnd+",\n"+example+"\n"+blockEnd, Options{Formats: []Format{FormatVCP}}).Calls
	}
	return calls
}

// sortedArgNames lists a call's argument names sorted, with "maid" (a
// copy the parser makes of "valet", §4) left out when valet is there.
func sortedArgNames(c Call) []string {
	var names []string
	for k := range c.Args {
		if k == "maid" {
			if _, v := c.Args["valet"]; v {
				continue
			}
		}
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func mustMarshal(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(err) // only called with values that always marshal
	}
	return b
}
