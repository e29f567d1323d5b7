package textproto

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Prompt formats: what a model is told about a set of tools.
const (
	PromptVCP           = "vcp"            // the server's {{VCPAllTools}} text
	PromptVCPDefinition = "vcp-definition" // AIO Hub's <<<[TOOL_DEFINITION]>>> blocks
	PromptXML           = "xml"            // the XML format's <functions> block and <output_instructions>
	PromptOpenAI        = "openai"         // the "tools" of an OpenAI chat request
	PromptAnthropic     = "anthropic"      // the "tools" of an Anthropic messages request
	PromptGemini        = "gemini"         // the "tools" of a Gemini request (functionDeclarations)
	// The text paradigms, named as Parse names the formats they teach.
	PromptToolCode     = "tool_code"     // the XML_Tag strategy's <tool_code>{"name", "arguments"}</tool_code>
	PromptFunctionCall = "function_call" // DeepChat's <function_call>{"name", "arguments"}</function_call>
	PromptJSON         = "json"          // DeepChat's {"tool_name", "parameters"} wrap
)

// PromptFormats lists the formats a prompt is rendered in.
var PromptFormats = []string{PromptVCP, PromptVCPDefinition, PromptXML, PromptOpenAI, PromptAnthropic, PromptGemini,
	PromptToolCode, PromptFunctionCall, PromptJSON}

// PromptFormat is format's canonical name, and whether it is one.
func PromptFormat(format string) (string, bool) {
	return format, slices.Contains(PromptFormats, format)
}

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
