package schema

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// resize declares every parameter type, a default, an enum and an alias.
func resize() *Schema {
	return &Schema{Params: []Param{
		{Name: "path", Type: TypeString, Required: true, Description: "the image, relative to a file root"},
		{Name: "width", Type: TypeInteger, Required: true, Description: "new width in pixels"},
		{Name: "scale", Type: TypeNumber},
		{Name: "keep_ratio", Type: TypeBoolean, Default: json.RawMessage(`true`)},
		{Name: "mode", Type: TypeString, Enum: []json.RawMessage{[]byte(`"fit"`), []byte(`"fill"`)}, Default: json.RawMessage(`"fit"`)},
		{Name: "tags", Type: TypeArray},
		{Name: "meta", Type: TypeObject},
		{Name: "out-file", Alias: "out_file", Type: TypeString},
	}}
}

func kv(kv ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = json.RawMessage(kv[i+1])
	}
	return m
}

// checkOK runs Check and compares its result with want, key by key.
func checkOK(t *testing.T, s *Schema, in map[string]json.RawMessage, selecting bool, want map[string]string) {
	t.Helper()
	got, problems := s.Check(in, selecting)
	if len(problems) > 0 {
		t.Fatalf("Check: %q", problems)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("keys %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for k, w := range want {
		if string(got[k]) != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
}

func TestCheckCoerces(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]json.RawMessage
		want map[string]string
	}{
		{"strings as VCP sends them",
			kv("path", `" a.png "`, "width", `"640"`, "scale", `"0.5"`, "keep_ratio", `"False"`, "mode", `"fill"`,
				"tags", `"[\"x\", 1]"`, "meta", `" {\"k\": true} "`, "out_file", `"b.png"`),
			map[string]string{"path": `" a.png "`, "width": `640`, "scale": `0.5`, "keep_ratio": `false`, "mode": `"fill"`,
				"tags": `["x", 1]`, "meta": `{"k": true}`, "out-file": `"b.png"`}},
		{"JSON values pass, defaults fill",
			kv("path", `"a.png"`, "width", `640`, "tags", `[]`),
			map[string]string{"path": `"a.png"`, "width": `640`, "keep_ratio": `true`, "mode": `"fit"`, "tags": `[]`}},
		{"integral forms are integers",
			kv("path", `"a"`, "width", `"1e3"`),
			map[string]string{"path": `"a"`, "width": `1000`, "keep_ratio": `true`, "mode": `"fit"`}},
		{"a number for a string becomes its text; the real name works as well as the alias",
			kv("path", `42`, "width", `"7"`, "out-file", `true`),
			map[string]string{"path": `"42"`, "width": `7`, "keep_ratio": `true`, "mode": `"fit"`, "out-file": `"true"`}},
		{"empty and null optional values take the default or vanish",
			kv("path", `"a"`, "width", `"7"`, "keep_ratio", `""`, "mode", `null`, "tags", `"  "`),
			map[string]string{"path": `"a"`, "width": `7`, "keep_ratio": `true`, "mode": `"fit"`}},
		{"server-injected keys pass untouched",
			kv("path", `"a"`, "width", `"1"`, "maid", `"Nova"`, "river_context", `[{"role":"user"}]`,
				"vref_files", `["file:///x"]`, "__vcp_timed_call", `{"taskId":"t"}`, "valet", `"V"`),
			map[string]string{"path": `"a"`, "width": `1`, "keep_ratio": `true`, "mode": `"fit"`, "maid": `"Nova"`,
				"river_context": `[{"role":"user"}]`, "vref_files": `["file:///x"]`, "__vcp_timed_call": `{"taskId":"t"}`, "valet": `"V"`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkOK(t, resize(), tc.in, false, tc.want) })
	}
}

func TestCheckProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]json.RawMessage
		want []string
	}{
		{"missing, wrong types, enum, unknown",
			kv("width", `"ten"`, "scale", `"1,5"`, "keep_ratio", `"yes"`, "mode", `"stretch"`, "tags", `"a, b"`,
				"meta", `"[1]"`, "widht", `"3"`, "maid", `"Nova"`),
			[]string{
				`missing required argument "path" (string)`,
				`argument "width": "ten" is not an integer`,
				`argument "scale": "1,5" is not a number`,
				`argument "keep_ratio": "yes" is not a boolean (true or false)`,
				`argument "mode": "stretch" is not one of "fit", "fill"`,
				`argument "tags": "a, b" is not an array (write it as JSON, e.g. ["a", "b"])`,
				`argument "meta": must be an object, not an array`,
				`unknown argument "widht": the parameters are path, width, scale, keep_ratio, mode, tags, meta, out_file`,
			}},
		{"a fraction for an integer; an object for a string; alias and name both",
			kv("path", `{"a":1}`, "width", `"2.5"`, "out_file", `"x"`, "out-file", `"y"`),
			[]string{
				`argument "path": must be a string, not an object`,
				`argument "width": "2.5" is not an integer`,
				`argument "out-file" is given twice, as "out-file" and as "out_file"`,
			}},
		{"a long value is clipped; a command is unknown when it does not select",
			kv("path", `"a"`, "width", `"`+strings.Repeat("x", 100)+`"`, "command", `"x"`),
			[]string{
				`argument "width": "` + strings.Repeat("x", 79) + `… is not an integer`,
				`unknown argument "command": the parameters are path, width, scale, keep_ratio, mode, tags, meta, out_file`,
			}},
		{"not JSON at all; a huge number",
			kv("path", `"a"`, "width", `1e999`, "scale", `{`),
			[]string{
				`argument "width": 1e999 is not an integer`,
				`argument "scale": is not valid JSON`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := resize().Check(tc.in, false)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// A parameter named "command" of a tool whose commands "command" selects
// stays under its alias, and "command" itself is passed on.
func TestCheckSelecting(t *testing.T) {
	s, err := FromJSON(json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"}},"required":["command"]}`))
	if err != nil {
		t.Fatal(err)
	}
	alias := s.Params[0].WireName()
	if alias == CommandArg {
		t.Fatalf("no alias for command: %+v", s.Params[0])
	}
	checkOK(t, s, kv("command", `"run"`, alias, `"ls -l"`), true, map[string]string{"command": `"run"`, alias: `"ls -l"`})
	checkOK(t, s, kv(alias, `"ls -l"`), false, map[string]string{"command": `"ls -l"`})
	if _, problems := s.Check(kv("command", `"run"`), true); !slices.Equal(problems, []string{`missing required argument "` + alias + `" (string)`}) {
		t.Errorf("the selection taken for the parameter: %q", problems)
	}
}

func TestCarriable(t *testing.T) {
	for name, want := range map[string]bool{
		"McpFilesystem": true, "read_file": true, "_x9": true,
		"": false, "Bad Name": false, "brave-search": false, "é": false, "a.b": false,
	} {
		if got := Carriable(name); got != want {
			t.Errorf("Carriable(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsInjectedArg(t *testing.T) {
	for key, want := range map[string]bool{
		"maid": true, "valet": true, "tool_password": true, "__anything": true,
		"path": false, "command": false, "_one": false,
	} {
		if got := IsInjectedArg(key); got != want {
			t.Errorf("IsInjectedArg(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestJSONKind(t *testing.T) {
	for raw, want := range map[string]string{
		"": "nothing", "  ": "nothing", `{"a":1}`: "an object", ` [1]`: "an array", "true": "a boolean",
		"false": "a boolean", "null": "null", `"x"`: "a string", "-1.5": "a number",
	} {
		if got := JSONKind(json.RawMessage(raw)); got != want {
			t.Errorf("JSONKind(%q) = %q, want %q", raw, got, want)
		}
	}
}
