package textproto

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
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
	s, err := schema.FromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := Functions([]toolhost.Spec{
		{Name: "Mcp", Description: "from MCP", Commands: []toolhost.Command{{Schema: s}}},
		{Name: "Multi", Commands: []toolhost.Command{
			{Command: "Play", Schema: &schema.Schema{Params: []schema.Param{{Name: "track", Type: schema.TypeInteger, Required: true}}}},
			{Command: "Stop", Description: "stops", Schema: &schema.Schema{}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(fns[0].Parameters); got != `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}` {
		t.Errorf("MCP schema not kept: %s", got)
	}
	if got := string(fns[1].Parameters); got != `{"type":"object","properties":{"command":{"type":"string","description":"which command to run","enum":["Play","Stop"]},"track":{"type":"integer"}},"required":["command"],`+
		`"anyOf":[{"properties":{"command":{"const":"Play"}},"required":["command","track"]},{"properties":{"command":{"const":"Stop"}},"required":["command"]}]}` {
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

// promptSpecs are the tools of the prompt golden files: a VCP plugin
// without a schema (its parameters come from its examples), an MCP server
// whose commands each require their own parameter, a typed tool with its
// own JSON Schema, and one typed multi-command tool.
func promptSpecs(t *testing.T) []toolhost.Spec {
	t.Helper()
	fromJSON := func(raw string) *schema.Schema {
		s, err := schema.FromJSON(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return []toolhost.Spec{
		{Name: "Weather", DisplayName: "天气", Description: "Weather reports.", Commands: []toolhost.Command{
			{Command: "Now", Description: "The weather now.", Example: S + "\ntool_name:「始」Weather「末」,\ncommand:「始」Now「末」,\ncity:「始」Paris「末」\n" + E},
			{Command: "Forecast", Description: "The next days.", Example: "city:「始」Paris「末」, days:「始」3「末」"},
		}},
		{Name: "Files", Description: "An MCP server.", Commands: []toolhost.Command{
			{Command: "read", Schema: fromJSON(`{"type":"object","description":"Reads a file.","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
			{Command: "move", Schema: fromJSON(`{"type":"object","description":"Moves a file.","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"]}`)},
			{Command: "list", Schema: fromJSON(`{"type":"object","properties":{}}`)},
		}},
		{Name: "Search", Commands: []toolhost.Command{{Schema: fromJSON(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"Searches.","properties":{"q":{"type":"string","description":"what <to> find"},"additionalProperties":{"type":"boolean"}},"required":["q"],"additionalProperties":false}`)}}},
	}
}

// TestPromptGolden renders promptSpecs in every format (the VCP text from
// their wire manifests, as the server builds it) against reviewed golden
// files in testdata/prompt.
func TestPromptGolden(t *testing.T) {
	specs := promptSpecs(t)
	for _, format := range PromptFormats {
		t.Run(format, func(t *testing.T) {
			var got string
			if format == PromptVCP {
				var ms []toolhost.Manifest
				for _, s := range specs {
					ms = append(ms, toolhost.NewManifest(s, 0))
				}
				got = VCPPrompt(ms)
			} else {
				var err error
				if got, err = RenderSpecs(format, specs); err != nil {
					t.Fatal(err)
				}
			}
			matchGolden(t, filepath.Join("testdata", "prompt", format+".golden"), got+"\n")
		})
	}
}

// TestTextParadigmsParse: the example call each text paradigm's
// instructions show is read back by Parse, in that format, as a call of
// the first tool and not an example.
func TestTextParadigmsParse(t *testing.T) {
	specs := promptSpecs(t)
	for format, want := range map[string]Format{PromptToolCode: FormatToolCode, PromptFunctionCall: FormatFunctionCall, PromptJSON: FormatJSON} {
		text, err := RenderSpecs(format, specs)
		if err != nil {
			t.Fatal(err)
		}
		instructions := text[strings.Index(text, "<output_instructions>"):]
		res := Parse(instructions, Options{})
		if len(res.Calls) != 1 || len(res.Rejected) != 0 {
			t.Fatalf("%s: %+v", format, res)
		}
		c := res.Calls[0]
		if c.Format != want || c.Tool != "Weather" || c.Example || string(c.Args["command"]) != `"Now"` {
			t.Errorf("%s: %+v", format, c)
		}
	}
	if f, ok := PromptFormat(PromptJSON); !ok || f != PromptJSON {
		t.Errorf("json is its own format, not an alias: %q %v", f, ok)
	}
}

// TestGeminiSchemaSubset: a schema within Gemini's OpenAPI subset is its
// "parameters"; one with const (a multi-command tool's branches) is its
// "parametersJsonSchema", never both.
func TestGeminiSchemaSubset(t *testing.T) {
	out, err := GeminiTools(promptSpecs(t))
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		FunctionDeclarations []map[string]json.RawMessage `json:"functionDeclarations"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, d := range tools[0].FunctionDeclarations {
		_, p := d["parameters"]
		_, js := d["parametersJsonSchema"]
		name := string(d["name"])
		if p == js {
			t.Errorf("%s: parameters %v, parametersJsonSchema %v", name, p, js)
		}
		if p && strings.Contains(string(d["parameters"]), `"const"`) {
			t.Errorf("%s: const in parameters", name)
		}
		if (name == `"Files"`) != js {
			t.Errorf("%s: parametersJsonSchema %v", name, js)
		}
	}
}
