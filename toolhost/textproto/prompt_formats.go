package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
)

// RenderSpecs renders specs in a prompt format other than PromptVCP (which
// is rendered from the wire manifests, VCPPrompt).
func RenderSpecs(format string, specs []toolhost.Spec) (string, error) {
	canonical, ok := PromptFormat(format)
	if !ok || canonical == PromptVCP {
		return "", fmt.Errorf("prompt format %q is not rendered from specs", format)
	}
	switch canonical {
	case PromptVCPDefinition:
		return VCPDefinitions(specs)
	case PromptXML:
		x, err := FunctionsXML(specs)
		if err != nil {
			return "", err
		}
		return x + "\n\n" + OutputInstructions, nil
	case PromptAnthropic:
		return AnthropicTools(specs)
	case PromptGemini:
		return GeminiTools(specs)
	case PromptToolCode, PromptFunctionCall, PromptJSON:
		return TextParadigm(canonical, specs)
	}
	return OpenAITools(specs)
}

// OutputInstructions is the XML format's <output_instructions>: how to write a
// <function_calls> block, put after the <functions> block.
const OutputInstructions = `<output_instructions>
如果需要调用工具，请使用以下格式：
<function_calls>
<invoke name="工具名称">
<parameter name="参数名">参数值</parameter>
<parameter name="另一个参数名">另一个参数值</parameter>
</invoke>
</function_calls>
如果需要调用多个工具，可以在 function_calls 中包含多个 invoke 块。
如果不需要调用工具，直接回复用户即可。
注意：
- 工具名称必须精确匹配 functions 中定义的名称
- 参数名必须精确匹配工具定义中的参数名
- 必需的参数不能省略
</output_instructions>`

// FunctionsXML is the XML format's <functions> block: one <function> line of
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
	return indentJSON(tools)
}

// AnthropicTools is the "tools" array of an Anthropic messages request:
// name, description and input_schema.
func AnthropicTools(specs []toolhost.Spec) (string, error) {
	fns, err := Functions(specs)
	if err != nil {
		return "", err
	}
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	tools := make([]tool, len(fns))
	for i, f := range fns {
		tools[i] = tool{Name: f.Name, Description: f.Description, InputSchema: f.Parameters}
	}
	return indentJSON(tools)
}

// geminiDropped are JSON Schema keywords outside the OpenAPI subset Gemini
// takes in functionDeclarations: it refuses a declaration that has them.
var geminiDropped = []string{"$schema", "$id", "additionalProperties"}

// geminiSubset are the schema keywords of the OpenAPI subset Gemini's
// "parameters" takes. A schema that needs another (const, oneOf, $ref…)
// goes in "parametersJsonSchema", which takes JSON Schema.
var geminiSubset = []string{"type", "format", "title", "description", "nullable", "enum", "items",
	"minItems", "maxItems", "properties", "required", "minProperties", "maxProperties", "propertyOrdering",
	"minLength", "maxLength", "pattern", "minimum", "maximum", "default", "example", "anyOf"}

// GeminiTools is the "tools" array of a Gemini request: one entry holding
// every tool in functionDeclarations. A schema within the OpenAPI subset
// is its "parameters", without the keywords Gemini refuses there; any
// other is its "parametersJsonSchema" as it is (but $schema and $id).
func GeminiTools(specs []toolhost.Spec) (string, error) {
	fns, err := Functions(specs)
	if err != nil {
		return "", err
	}
	type decl struct {
		Name                 string `json:"name"`
		Description          string `json:"description"`
		Parameters           any    `json:"parameters,omitempty"`
		ParametersJSONSchema any    `json:"parametersJsonSchema,omitempty"`
	}
	decls := make([]decl, len(fns))
	for i, f := range fns {
		var schema any
		if err := json.Unmarshal(f.Parameters, &schema); err != nil {
			return "", fmt.Errorf("tool %q: %w", f.Name, err)
		}
		decls[i] = decl{Name: f.Name, Description: f.Description}
		schema = dropKeywords(schema)
		if inSubset(schema) {
			decls[i].Parameters = schema
			continue
		}
		var full map[string]any
		if err := json.Unmarshal(f.Parameters, &full); err != nil {
			return "", fmt.Errorf("tool %q: %w", f.Name, err)
		}
		delete(full, "$schema")
		delete(full, "$id")
		decls[i].ParametersJSONSchema = full
	}
	return indentJSON([]map[string]any{{"functionDeclarations": decls}})
}

// inSubset reports whether a schema uses only geminiSubset keywords, at
// every depth (property names are names, not keywords).
func inSubset(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if !slices.Contains(geminiSubset, k) {
				return false
			}
			if k == "properties" {
				props, ok := sub.(map[string]any)
				if !ok {
					return false
				}
				for _, p := range props {
					if !inSubset(p) {
						return false
					}
				}
				continue
			}
			if (k == "items" || k == "anyOf") && !inSubset(sub) {
				return false
			}
		}
	case []any:
		for _, e := range t {
			if !inSubset(e) {
				return false
			}
		}
	}
	return true
}

// dropKeywords removes geminiDropped from a schema, at every depth, except
// as names of properties.
func dropKeywords(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range geminiDropped {
			delete(t, k)
		}
		for k, sub := range t {
			if k == "properties" {
				if props, ok := sub.(map[string]any); ok {
					for name, p := range props {
						props[name] = dropKeywords(p)
					}
					continue
				}
			}
			t[k] = dropKeywords(sub)
		}
	case []any:
		for i := range t {
			t[i] = dropKeywords(t[i])
		}
	}
	return v
}

// The markers of AIO Hub's definition blocks.
const (
	definitionStart = "<<<[TOOL_DEFINITION]>>>"
	definitionEnd   = "<<<[END_TOOL_DEFINITION]>>>"
)

// definitionParam is one entry of a definition block's parameters list.
type definitionParam struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Required    bool              `json:"required"`
	Description string            `json:"description,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitempty"`
}

// VCPDefinitions is AIO Hub's tool definition text: one
// <<<[TOOL_DEFINITION]>>> block per command, with its tool_name, command,
// description, parameters (a JSON list: name, type, required, default…)
// and example, each field written as a VCP value.
func VCPDefinitions(specs []toolhost.Spec) (string, error) {
	var blocks []string
	for _, s := range specs {
		m := toolhost.NewManifest(s, time.Duration(0))
		for i, c := range s.Commands {
			wire := m.Capabilities.InvocationCommands[i]
			params := []definitionParam{}
			for _, p := range commandParams(c) {
				params = append(params, definitionParam{Name: p.Name, Type: string(p.Type), Required: p.Required,
					Description: strings.TrimSpace(p.Description), Default: p.Default, Enum: p.Enum})
			}
			pj, err := marshal(params)
			if err != nil {
				return "", fmt.Errorf("tool %q: %w", s.Name, err)
			}
			desc := strings.TrimSpace(wire.Description)
			if desc == "" {
				desc = strings.TrimSpace(s.Description)
			}
			fields := [][2]string{{"tool_name", s.Name}}
			if c.Command != "" {
				fields = append(fields, [2]string{"command", c.Command})
			}
			fields = append(fields, [2]string{"description", desc}, [2]string{"parameters", string(pj)})
			if ex := strings.TrimSpace(wire.Example); ex != "" {
				fields = append(fields, [2]string{"example", ex})
			}
			blocks = append(blocks, vcpBlock(definitionStart, definitionEnd, fields))
		}
	}
	return strings.Join(blocks, "\n\n"), nil
}

// vcpBlock writes a block between two markers, one key:「始」value「末」
// line per field; a value holding the protocol's own markers is written
// inside 「始ESCAPE」…「末ESCAPE」, which the server reads as written (§3
// rule 4).
func vcpBlock(start, end string, fields [][2]string) string {
	var b strings.Builder
	b.WriteString(start)
	b.WriteByte('\n')
	for _, f := range fields {
		open, closing := valueStart, valueEnd
		if strings.Contains(f[1], valueEnd) || strings.Contains(f[1], valueStart) || strings.Contains(f[1], "<<<[") {
			open, closing = "「始ESCAPE」", "「末ESCAPE」"
		}
		b.WriteString(f[0])
		b.WriteByte(':')
		b.WriteString(open)
		b.WriteString(f[1])
		b.WriteString(closing)
		b.WriteByte('\n')
	}
	b.WriteString(end)
	return b.String()
}

// indentJSON marshals v indented by two spaces, keeping <, > and & readable.
func indentJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
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
