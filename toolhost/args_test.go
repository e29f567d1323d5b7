package toolhost

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// resizeSpec is a one-command typed tool with every parameter type.
func resizeSpec() Spec {
	return Spec{
		Name:        "Resize",
		Description: "Resizes an image on this machine.",
		Commands: []Command{{Schema: &schema.Schema{Params: []schema.Param{
			{Name: "path", Type: schema.TypeString, Required: true, Description: "the image, relative to a file root"},
			{Name: "width", Type: schema.TypeInteger, Required: true, Description: "new width in pixels"},
			{Name: "scale", Type: schema.TypeNumber},
			{Name: "keep_ratio", Type: schema.TypeBoolean, Default: json.RawMessage(`true`)},
			{Name: "mode", Type: schema.TypeString, Enum: []json.RawMessage{[]byte(`"fit"`), []byte(`"fill"`)}, Default: json.RawMessage(`"fit"`)},
			{Name: "tags", Type: schema.TypeArray},
			{Name: "meta", Type: schema.TypeObject},
			{Name: "out-file", Alias: "out_file", Type: schema.TypeString},
		}}}},
	}
}

// mediaSpec is a multi-command typed tool.
func mediaSpec() Spec {
	return Spec{
		Name: "Media",
		Commands: []Command{
			{Command: "Play", Schema: &schema.Schema{Params: []schema.Param{{Name: "track", Type: schema.TypeInteger, Required: true}}}},
			{Command: "Stop", Schema: &schema.Schema{}},
		},
	}
}

func kv(kv ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = json.RawMessage(kv[i+1])
	}
	return m
}

func TestCheckArgsCoerces(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		in   map[string]json.RawMessage
		want map[string]string
	}{
		{"strings as VCP sends them", resizeSpec(),
			kv("path", `" a.png "`, "width", `"640"`, "scale", `"0.5"`, "keep_ratio", `"False"`, "mode", `"fill"`,
				"tags", `"[\"x\", 1]"`, "meta", `" {\"k\": true} "`, "out_file", `"b.png"`),
			map[string]string{"path": `" a.png "`, "width": `640`, "scale": `0.5`, "keep_ratio": `false`, "mode": `"fill"`,
				"tags": `["x", 1]`, "meta": `{"k": true}`, "out-file": `"b.png"`}},
		{"a command that names the one-command tool passes", resizeSpec(),
			kv("path", `"a"`, "width", `"1"`, "command", `"resize"`),
			map[string]string{"path": `"a"`, "width": `1`, "keep_ratio": `true`, "mode": `"fit"`, "command": `"resize"`}},
		{"multi-command: selected by command, case-insensitively", mediaSpec(),
			kv("command", `"play"`, "track", `"3"`),
			map[string]string{"command": `"play"`, "track": `3`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckArgs(tc.spec, tc.in)
			if err != nil {
				t.Fatalf("CheckArgs: %v", err)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want))) {
				t.Fatalf("keys %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tc.want)))
			}
			for k, w := range tc.want {
				if string(got[k]) != w {
					t.Errorf("%s = %s, want %s", k, got[k], w)
				}
			}
		})
	}
}

func TestCheckArgsUntypedPassesThrough(t *testing.T) {
	in := kv("anything", `"x"`, "n", `"10"`)
	got, err := CheckArgs(NewEchoTool().Spec(), in)
	if err != nil || !maps.EqualFunc(got, in, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatalf("CheckArgs of an untyped tool = %v, %v; want the args unchanged", got, err)
	}
}

func TestCheckArgsErrorTexts(t *testing.T) {
	resizeUsage := "Call it like this:\n" +
		"Resizes an image on this machine.\n" +
		"Parameters:\n" +
		"- path (string, required): the image, relative to a file root\n" +
		"- width (integer, required): new width in pixels\n" +
		"- scale (number, optional)\n" +
		"- keep_ratio (boolean, optional, default true)\n" +
		"- mode (string, optional, default \"fit\", one of \"fit\", \"fill\")\n" +
		"- tags (array, optional)\n" +
		"- meta (object, optional)\n" +
		"- out_file (string, optional) (the parameter \"out-file\")\n" +
		"<<<[TOOL_REQUEST]>>>\n" +
		"tool_name:「始」Resize「末」,\n" +
		"path:「始」<path>「末」,\n" +
		"width:「始」1「末」\n" +
		"<<<[END_TOOL_REQUEST]>>>"
	for _, tc := range []struct {
		name string
		spec Spec
		in   map[string]json.RawMessage
		want string
	}{
		{"missing, wrong types, enum, unknown", resizeSpec(),
			kv("width", `"ten"`, "scale", `"1,5"`, "keep_ratio", `"yes"`, "mode", `"stretch"`, "tags", `"a, b"`,
				"meta", `"[1]"`, "widht", `"3"`, "maid", `"Nova"`),
			"invalid arguments for Resize:\n" +
				"- missing required argument \"path\" (string)\n" +
				"- argument \"width\": \"ten\" is not an integer\n" +
				"- argument \"scale\": \"1,5\" is not a number\n" +
				"- argument \"keep_ratio\": \"yes\" is not a boolean (true or false)\n" +
				"- argument \"mode\": \"stretch\" is not one of \"fit\", \"fill\"\n" +
				"- argument \"tags\": \"a, b\" is not an array (write it as JSON, e.g. [\"a\", \"b\"])\n" +
				"- argument \"meta\": must be an object, not an array\n" +
				"- unknown argument \"widht\": the parameters are path, width, scale, keep_ratio, mode, tags, meta, out_file\n" +
				resizeUsage},
		{"a fraction for an integer; an object for a string; alias and name both", resizeSpec(),
			kv("path", `{"a":1}`, "width", `"2.5"`, "out_file", `"x"`, "out-file", `"y"`),
			"invalid arguments for Resize:\n" +
				"- argument \"path\": must be a string, not an object\n" +
				"- argument \"width\": \"2.5\" is not an integer\n" +
				"- argument \"out-file\" is given twice, as \"out-file\" and as \"out_file\"\n" +
				resizeUsage},
		{"unknown command", mediaSpec(), kv("command", `"Pause"`),
			"invalid arguments for Media:\n" +
				"- unknown command \"Pause\": the commands are \"Play\", \"Stop\"\n" +
				"Call it like this:\n" +
				"Command Play: pass command:「始」Play「末」.\n" +
				"Parameters:\n" +
				"- track (integer, required)\n" +
				"<<<[TOOL_REQUEST]>>>\ntool_name:「始」Media「末」,\ncommand:「始」Play「末」,\ntrack:「始」1「末」\n<<<[END_TOOL_REQUEST]>>>\n\n" +
				"Command Stop: pass command:「始」Stop「末」.\n" +
				"Takes no parameters.\n" +
				"<<<[TOOL_REQUEST]>>>\ntool_name:「始」Media「末」,\ncommand:「始」Stop「末」\n<<<[END_TOOL_REQUEST]>>>"},
		{"missing command", mediaSpec(), kv("track", `"1"`),
			"invalid arguments for Media:\n- missing required argument \"command\": one of \"Play\", \"Stop\"\nCall it like this:\n"},
		{"a problem in the selected command shows only its usage", mediaSpec(), kv("command", `"Play"`),
			"invalid arguments for Media (command Play):\n" +
				"- missing required argument \"track\" (integer)\n" +
				"Call it like this:\n" +
				"Command Play: pass command:「始」Play「末」.\n" +
				"Parameters:\n" +
				"- track (integer, required)\n" +
				"<<<[TOOL_REQUEST]>>>\ntool_name:「始」Media「末」,\ncommand:「始」Play「末」,\ntrack:「始」1「末」\n<<<[END_TOOL_REQUEST]>>>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckArgs(tc.spec, tc.in)
			var ae *ArgsError
			if !errors.As(err, &ae) || !errors.Is(err, ErrBadArgs) {
				t.Fatalf("CheckArgs error = %v, want an *ArgsError", err)
			}
			got := err.Error()
			if strings.HasSuffix(tc.want, "Call it like this:\n") {
				if !strings.HasPrefix(got, tc.want) {
					t.Fatalf("error text:\n%s\nwant it to start with:\n%s", got, tc.want)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("error text:\n%s\n\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestManifestGeneratesInvocationText(t *testing.T) {
	m := NewManifest(resizeSpec(), 0)
	c := m.Capabilities.InvocationCommands[0]
	if !strings.HasPrefix(c.Description, "Resizes an image on this machine.\nParameters:\n- path (string, required)") {
		t.Errorf("description:\n%s", c.Description)
	}
	if c.Example != "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Resize「末」,\npath:「始」<path>「末」,\nwidth:「始」1「末」\n<<<[END_TOOL_REQUEST]>>>" {
		t.Errorf("example:\n%s", c.Example)
	}
	// A source's own text is kept; untyped commands are untouched.
	own := resizeSpec()
	own.Commands[0].Description = "mine"
	if c := NewManifest(own, 0).Capabilities.InvocationCommands[0]; c.Description != "mine" || !strings.HasPrefix(c.Example, RequestStart) {
		t.Errorf("own description replaced or example missing: %+v", c)
	}
	echo := NewEchoTool().Spec()
	if got := NewManifest(echo, 0).Capabilities.InvocationCommands[0]; got.Description != echo.Commands[0].Description {
		t.Errorf("untyped command changed")
	}
}

func TestInvocationTextUsesTheSchemaDescription(t *testing.T) {
	read, err := schema.FromJSON(json.RawMessage(`{"description":"Read a file.","properties":{"path":{"type":"string"}},"required":["path"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Name: "fs", Description: "An MCP server.", Commands: []Command{
		{Command: "read_file", Schema: read},
		{Command: "list", Schema: &schema.Schema{}},
	}}
	got := NewManifest(s, 0).Capabilities.InvocationCommands[0].Description
	want := "An MCP server.\nCommand read_file: Read a file. Pass command:「始」read_file「末」.\nParameters:\n- path (string, required)"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	one := Spec{Name: "one", Commands: []Command{{Schema: read}}}
	if got := NewManifest(one, 0).Capabilities.InvocationCommands[0].Description; !strings.HasPrefix(got, "Read a file.\nParameters:") {
		t.Errorf("one command without a tool description:\n%s", got)
	}
}

func TestUnknownCommandOfAManyCommandToolShowsTheClosest(t *testing.T) {
	s := Spec{Name: "fs"}
	for _, n := range []string{"read_file", "write_file", "list_directory", "move_file", "search_files"} {
		s.Commands = append(s.Commands, Command{Command: n, Schema: &schema.Schema{}})
	}
	_, err := CheckArgs(s, kv("command", `"readfile"`))
	text := err.Error()
	if !strings.Contains(text, `unknown command "readfile": the commands are "read_file", "write_file", "list_directory", "move_file", "search_files"`) ||
		!strings.Contains(text, "command:「始」read_file「末」") || strings.Contains(text, "command:「始」write_file「末」") {
		t.Fatalf("error text:\n%s", text)
	}
}

// A parameter named "command" (an MCP shell tool's, say) of a tool whose
// commands are selected by "command" keeps both: the selection under
// "command", the parameter under its alias.
func TestCheckArgsParameterNamedCommand(t *testing.T) {
	sc, err := schema.FromJSON(json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}},"required":["command"]}`))
	if err != nil {
		t.Fatal(err)
	}
	alias := sc.Params[0].WireName()
	if alias == schema.CommandArg {
		t.Fatalf("no alias for command: %+v", sc.Params[0])
	}
	s := Spec{Name: "McpShell", Commands: []Command{{Command: "run", Schema: sc}, {Command: "other", Schema: &schema.Schema{}}}}
	out, err := CheckArgs(s, map[string]json.RawMessage{"command": json.RawMessage(`"run"`), alias: json.RawMessage(`"ls -l"`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(out["command"]) != `"run"` || string(out[alias]) != `"ls -l"` || len(out) != 2 {
		t.Errorf("out = %s", out)
	}
	_, err = CheckArgs(s, map[string]json.RawMessage{"command": json.RawMessage(`"run"`)})
	if err == nil || !strings.Contains(err.Error(), `missing required argument "`+alias+`"`) {
		t.Errorf("the selection taken for the parameter: %v", err)
	}
}
