package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Prompt formats: what a model is told about a set of tools.
const (
	PromptVCP  = "vcp"  // the server's {{VCPAllTools}} text
	PromptXML  = "xml"  // seed 004's <functions> block
	PromptJSON = "json" // OpenAI-style function definitions
)

// PromptFormats lists the formats Prompt renders.
var PromptFormats = []string{PromptVCP, PromptXML, PromptJSON}

// cloudPrefix is what the server puts before a distributed tool's displayName.
const cloudPrefix = "[云端] "

// noVCPTools is the server's text for {{VCPAllTools}} when no tool has a description.
const noVCPTools = "没有可用的VCP工具描述信息"

// VCPPrompt renders wire manifests (as sent in register_tools) the way the
// server turns them into {{VCPAllTools}}: per command with a description,
// "- [云端] displayName (name) - 命令: command:" then the description
// indented four spaces, then "  调用示例:" and the example indented; a
// tool's commands joined by blank lines, tools joined by "---" lines.
func VCPPrompt(manifests []toolhost.Manifest) string {
	var tools []string
	for _, m := range manifests {
		display := m.DisplayName
		if display == "" {
			display = m.Name
		}
		var cmds []string
		for _, c := range m.Capabilities.InvocationCommands {
			if c.Description == "" {
				continue // the server leaves such commands out
			}
			name := c.Command
			if name == "" {
				name = "N/A"
			}
			var b strings.Builder
			fmt.Fprintf(&b, "- %s%s (%s) - 命令: %s:\n", cloudPrefix, display, m.Name, name)
			b.WriteString(indent(c.Description))
			if c.Example != "" {
				b.WriteString("\n  调用示例:\n")
				b.WriteString(indent(c.Example))
			}
			cmds = append(cmds, b.String())
		}
		if len(cmds) > 0 {
			tools = append(tools, strings.Join(cmds, "\n\n"))
		}
	}
	if len(tools) == 0 {
		return noVCPTools
	}
	return strings.Join(tools, "\n\n---\n\n")
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// Function is one tool as OpenAI-style function calling and seed 004's
// <functions> block describe it.
type Function struct {
	// The field order is seed 004's.
	Description string          `json:"description"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Functions describes specs as functions: the description is the tool's
// description followed by each command's own (a typed command's generated
// text is left out: its parameters are in the schema),
// and the parameters are the JSON Schema of its typed commands (the
// source's own schema when it has one; several commands are told apart by a
// "command" property), or an open object for an untyped tool.
func Functions(specs []toolhost.Spec) ([]Function, error) {
	out := make([]Function, 0, len(specs))
	for _, s := range specs {
		params, err := parametersSchema(s)
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
		if d == "" && c.Schema != nil && len(s.Commands) > 1 {
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
}

type jsonSchemaProp struct {
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
}

func parametersSchema(s toolhost.Spec) (json.RawMessage, error) {
	var typed []toolhost.Command
	for _, c := range s.Commands {
		if c.Schema != nil {
			typed = append(typed, c)
		}
	}
	if len(typed) == 1 && len(s.Commands) == 1 && len(typed[0].Schema.Raw) > 0 {
		return compact(typed[0].Schema.Raw)
	}
	obj := jsonSchemaObject{Type: "object", Properties: map[string]json.RawMessage{}}
	if len(s.Commands) > 1 {
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
		obj.Properties[toolhost.CommandArg] = b
		obj.Required = append(obj.Required, toolhost.CommandArg)
	}
	for _, c := range typed {
		for _, p := range c.Schema.Params {
			if _, seen := obj.Properties[p.Name]; seen {
				continue
			}
			b, err := marshal(jsonSchemaProp{Type: string(p.Type), Description: p.Description, Enum: p.Enum, Default: p.Default})
			if err != nil {
				return nil, err
			}
			obj.Properties[p.Name] = b
			// Required only when every command has it required: with
			// several commands each keeps its own list in the description.
			if p.Required && len(s.Commands) == 1 && !slices.Contains(obj.Required, p.Name) {
				obj.Required = append(obj.Required, p.Name)
			}
		}
	}
	return marshal(obj)
}

// FunctionsXML is seed 004's <functions> block: one <function> line of
// JSON per tool.
func FunctionsXML(specs []toolhost.Spec) (string, error) {
	fns, err := Functions(specs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("<functions>\n")
	for _, f := range fns {
		j, err := marshal(f)
		if err != nil {
			return "", err
		}
		b.WriteString("<function>")
		b.Write(j)
		b.WriteString("</function>\n")
	}
	b.WriteString("</functions>")
	return b.String(), nil
}

// OpenAITools is the "tools" array of an OpenAI chat request, indented.
func OpenAITools(specs []toolhost.Spec) (string, error) {
	fns, err := Functions(specs)
	if err != nil {
		return "", err
	}
	type tool struct {
		Type     string   `json:"type"`
		Function Function `json:"function"`
	}
	tools := make([]tool, len(fns))
	for i, f := range fns {
		tools[i] = tool{Type: "function", Function: f}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tools); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// marshal is json.Marshal keeping <, > and & readable.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

func compact(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("its JSON Schema: %w", err)
	}
	return buf.Bytes(), nil
}
