package toolhost

import "encoding/json"

// ParamType is one of the JSON-Schema types a typed tool's parameter may have.
type ParamType string

// The parameter types of the JSON-Schema subset typed tools declare.
const (
	TypeString  ParamType = "string"
	TypeInteger ParamType = "integer"
	TypeNumber  ParamType = "number"
	TypeBoolean ParamType = "boolean"
	TypeArray   ParamType = "array"
	TypeObject  ParamType = "object"
)

// Schema declares a command's parameters. A tool whose commands carry no
// Schema is untyped: its arguments are passed on as they arrive (VCP plugin
// manifests are untyped).
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
	Type        ParamType
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
