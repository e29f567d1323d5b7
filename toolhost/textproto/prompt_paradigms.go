package textproto

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// TextParadigm teaches a model without native function calling to call
// the tools in one of the text formats Parse reads: the tools as a
// <tools> block, one JSON line {"name", "description", "parameters"} per
// tool, then <output_instructions> (as the XML format closes its prompt) saying
// how to write a call in that format, with an example of the first tool.
// format is PromptToolCode, PromptFunctionCall or PromptJSON.
func TextParadigm(format string, specs []toolhost.Spec) (string, error) {
	fns, err := Functions(specs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("<tools>\n")
	for _, f := range fns {
		j, err := marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}{f.Name, f.Description, f.Parameters})
		if err != nil {
			return "", err
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString("</tools>\n\n")
	example, err := exampleCall(format, fns)
	if err != nil {
		return "", err
	}
	var how, many string
	switch format {
	case PromptToolCode:
		how = `write a JSON object with the tool's "name" and its "arguments" object between tool_code tags`
		many = "one tool_code block per call"
	case PromptFunctionCall:
		how = `write a JSON object with the tool's "name" and its "arguments" object between function_call tags`
		many = "one function_call block per call"
	case PromptJSON:
		how = `write a JSON object with the tool's name as "tool_name" and its arguments as the "parameters" object`
		many = "one such object per call"
	default:
		return "", fmt.Errorf("prompt format %q is not a text paradigm", format)
	}
	fmt.Fprintf(&b, `<output_instructions>
You can call the tools above. To call one, %s, exactly like this:
%s
To call several tools, write %s.
Write calls as plain text, never inside a Markdown code fence: a call in a fence is taken as an example and is not run.
Use the tool names and argument names exactly as defined above, and never leave out a required argument.
Write strict JSON: double quotes, no comments, no trailing commas.
After a call, stop and wait for its result. If no tool is needed, answer the user directly.
</output_instructions>`, how, example, many)
	return b.String(), nil
}

// exampleCall is a call of the first tool in format: its required
// arguments, each with a placeholder value.
func exampleCall(format string, fns []Function) (string, error) {
	name := "tool_name_here"
	args := map[string]string{}
	if len(fns) > 0 {
		name = fns[0].Name
		var schema struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Enum []json.RawMessage `json:"enum"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(fns[0].Parameters, &schema) // no list: no required argument
		for _, r := range slices.Sorted(slices.Values(schema.Required)) {
			args[r] = "<" + r + ">"
			var first string
			if enum := schema.Properties[r].Enum; len(enum) > 0 && json.Unmarshal(enum[0], &first) == nil {
				args[r] = first // a command name, say: the example shows a real one
			}
		}
	}
	var v any
	if format == PromptJSON {
		v = struct {
			ToolName   string            `json:"tool_name"`
			Parameters map[string]string `json:"parameters"`
		}{name, args}
	} else {
		v = struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}{name, args}
	}
	j, err := marshal(v)
	if err != nil {
		return "", err
	}
	switch format {
	case PromptToolCode:
		return "<tool_code>" + string(j) + "</tool_code>", nil
	case PromptFunctionCall:
		return "<function_call>" + string(j) + "</function_call>", nil
	}
	return string(j), nil
}
