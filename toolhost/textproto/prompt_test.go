package textproto

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
)

func TestVCPPromptFormatsAsTheServer(t *testing.T) {
	ms := []toolhost.Manifest{
		{Name: "A", DisplayName: "Alpha", Capabilities: toolhost.ManifestCaps{InvocationCommands: []toolhost.Command{
			{Command: "Go", Description: "line 1\nline 2", Example: "ex 1\nex 2"},
			{Command: "Skip"}, // no description: left out
			{Description: "no command name"},
		}}},
		{Name: "B", Capabilities: toolhost.ManifestCaps{InvocationCommands: []toolhost.Command{{Command: "X"}}}},
		{Name: "C", Capabilities: toolhost.ManifestCaps{InvocationCommands: []toolhost.Command{{Command: "C", Description: "d"}}}},
	}
	want := "- [云端] Alpha (A) - 命令: Go:\n    line 1\n    line 2\n  调用示例:\n    ex 1\n    ex 2\n\n" +
		"- [云端] Alpha (A) - 命令: N/A:\n    no command name\n\n---\n\n" +
		"- [云端] C (C) - 命令: C:\n    d"
	if got := VCPPrompt(ms); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := VCPPrompt(ms[1:2]); got != noVCPTools {
		t.Errorf("no descriptions: %q", got)
	}
}

func TestFunctionsUseTheSourceSchemaAndCommands(t *testing.T) {
	raw := json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false}`)
	s, err := toolhost.SchemaFromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := Functions([]toolhost.Spec{
		{Name: "Mcp", Description: "from MCP", Commands: []toolhost.Command{{Schema: s}}},
		{Name: "Multi", Commands: []toolhost.Command{
			{Command: "Play", Schema: &toolhost.Schema{Params: []toolhost.Param{{Name: "track", Type: toolhost.TypeInteger, Required: true}}}},
			{Command: "Stop", Description: "stops", Schema: &toolhost.Schema{}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(fns[0].Parameters); got != `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}` {
		t.Errorf("MCP schema not kept: %s", got)
	}
	if got := string(fns[1].Parameters); got != `{"type":"object","properties":{"command":{"type":"string","description":"which command to run","enum":["Play","Stop"]},"track":{"type":"integer"}},"required":["command"]}` {
		t.Errorf("multi-command schema: %s", got)
	}
	if fns[1].Description != "Command Stop: stops" {
		t.Errorf("description %q", fns[1].Description)
	}
	x, err := FunctionsXML(nil)
	if err != nil || x != "<functions>\n</functions>" {
		t.Errorf("empty block %q %v", x, err)
	}
	j, err := OpenAITools([]toolhost.Spec{{Name: "E"}})
	if err != nil || !strings.Contains(j, `"type": "function"`) || !json.Valid([]byte(j)) {
		t.Errorf("openai %s %v", j, err)
	}
}
