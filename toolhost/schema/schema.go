package schema

import (
	"encoding/json"
	"slices"
	"strings"
)

// Type is one of the JSON-Schema types a typed tool's parameter may have.
type Type string

// The parameter types of the JSON-Schema subset typed tools declare.
const (
	TypeString  Type = "string"
	TypeInteger Type = "integer"
	TypeNumber  Type = "number"
	TypeBoolean Type = "boolean"
	TypeArray   Type = "array"
	TypeObject  Type = "object"
)

// Schema declares a command's parameters. A command without a Schema is
// untyped: its arguments are passed on as they arrive (VCP plugin manifests
// are untyped).
type Schema struct {
	// Params in the order they are documented.
	Params []Param
	// Raw is the source's full JSON Schema when it has one (an MCP tool's
	// inputSchema); Params is the subset the node checks and coerces.
	Raw json.RawMessage
}

// Param is one parameter of a Schema.
type Param struct {
	Name        string
	Description string
	Type        Type
	Required    bool
	// Enum lists the allowed values as JSON; empty means any value of Type.
	Enum []json.RawMessage
	// Default is filled in when the argument is absent (JSON; nil = none).
	Default json.RawMessage
	// Alias is the name the VCP text protocol carries when Name cannot be
	// carried (characters outside [A-Za-z0-9_], or "command"); empty = Name.
	Alias string
}

// WireName is the argument name the model uses for p.
func (p Param) WireName() string {
	if p.Alias != "" {
		return p.Alias
	}
	return p.Name
}

// Description is the top-level "description" of the source's JSON Schema
// (an MCP tool keeps its own description there), on one line; "" when the
// schema has none.
func (s *Schema) Description() string {
	if len(s.Raw) == 0 {
		return ""
	}
	var top struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(s.Raw, &top) != nil {
		return ""
	}
	return strings.Join(strings.Fields(top.Description), " ")
}

// CommandArg is the argument that selects one of a multi-command tool's commands.
const CommandArg = "command"

// injectedArgs are keys the VCP server (or its parser) adds to a call's
// arguments on its own (protocol.md §2.3.1). They are never an error and are
// passed to the tool untouched; a tool that forwards its arguments elsewhere
// drops them with IsInjectedArg.
var injectedArgs = []string{
	"maid",             // the agent's name, kept by the server
	"valet",            // copied to maid by the parser, and kept
	"river_context",    // the conversation, injected with river:…
	"vref_files",       // file:// URLs on the main server, injected with vref:…
	"__vcp_timed_call", // a scheduled call's trigger record
	"tool_password",    // sent by the model when the server's VCPToolCode is off
	"timely_contact",   // the scheduler's own argument
}

// IsInjectedArg reports whether key is one the server adds to calls itself
// (maid, river_context, vref_files, __vcp_timed_call…), or any key starting
// with "__", which the server reserves for such records.
func IsInjectedArg(key string) bool {
	return slices.Contains(injectedArgs, key) || strings.HasPrefix(key, "__")
}
