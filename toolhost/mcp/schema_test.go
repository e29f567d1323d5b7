package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestConvertSchemaRejectsInvalid(t *testing.T) {
	for _, tc := range []struct {
		schema, want string
	}{
		{`"a string"`, "not a JSON object"},
		{`{"type":"array"}`, `type is "array", not "object"`},
		{`{"type":"object","properties":[1]}`, "properties: not a JSON object"},
		{`{"type":"object","properties":{"a":5}}`, `property "a": its schema is not a JSON object`},
		{`{"type":"object","properties":{"a":{"type":"strnig"}}}`, `property "a": unknown type "strnig"`},
		{`{"type":"object","properties":{"a":{"type":7}}}`, `property "a": type 7 is neither a name nor a list of names`},
		{`{"type":"object","required":"a"}`, "required is not an array of names"},
		{`{"type":"object","properties":{"a":{"description":3}}}`, `property "a": description is not a string`},
	} {
		_, err := convertSchema("", json.RawMessage(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "invalid inputSchema") {
			t.Errorf("%s: err = %v, want %q", tc.schema, err, tc.want)
		}
	}
}

func TestConvertSchemaTypesAndAliases(t *testing.T) {
	s, err := convertSchema("Reads files.", map[string]any{
		"type":     "object",
		"required": []any{"path", "x-y"},
		"properties": map[string]any{
			"path":    map[string]any{"type": "string", "description": "where"},
			"x-y":     map[string]any{"type": []any{"null", "number"}},
			"x_y":     map[string]any{"type": "integer"},
			"command": map[string]any{"enum": []any{"a", "b"}},
			"tags":    map[string]any{"type": "array", "default": []any{"t"}},
			"日本":      map[string]any{"anyOf": []any{}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range s.Params {
		got = append(got, p.Name+"/"+p.WireName()+"/"+string(p.Type)+"/"+map[bool]string{true: "req", false: "opt"}[p.Required])
	}
	want := []string{"path/path/string/req", "x-y/x_y_2/number/req", "command/command_arg//opt",
		"tags/tags/array/opt", "x_y/x_y/integer/opt", "日本/arg//opt"}
	if !slices.Equal(got, want) {
		t.Errorf("params:\n%q\nwant\n%q", got, want)
	}
	if string(s.Params[3].Default) != `["t"]` || len(s.Params[2].Enum) != 2 {
		t.Errorf("default/enum lost: %+v", s.Params)
	}
	if !strings.Contains(string(s.Raw), `"description":"Reads files."`) {
		t.Errorf("raw = %s", s.Raw)
	}
	// An absent schema is an argument-less tool.
	if s, err := convertSchema("", nil); err != nil || len(s.Params) != 0 {
		t.Errorf("nil schema: %v %v", s, err)
	}
}

func TestServerEnvKeepsSecretsOut(t *testing.T) {
	env := serverEnv(Options{
		Environ: []string{"PATH=/bin", "HOME=/h", "VCPNODE_KEY=k", "AWS_SECRET=s", "LC_ALL=C", "PASSED=p"},
		PassEnv: []string{"PASSED", "VCPNODE_KEY"},
		Secret:  []string{"VCPNODE_KEY"},
	}, ServerConfig{Env: map[string]string{"LOG_LEVEL": "warn"}})
	want := []string{"HOME=/h", "LC_ALL=C", "LOG_LEVEL=warn", "PASSED=p", "PATH=/bin"}
	if !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
}

func TestServerConfigValidate(t *testing.T) {
	if got := DefaultToolName("brave-search"); got != "McpBraveSearch" {
		t.Errorf("DefaultToolName = %s", got)
	}
	err := Check([]ServerConfig{
		{Name: "a"},
		{Name: "b", Command: "x", URL: "http://127.0.0.1:1/mcp"},
		{Name: "c", URL: "ftp://x", Args: []string{"y"}},
		{Name: "d", Command: "x", Headers: map[string]string{"A": "b"}, Include: []string{"p"}, Exclude: []string{"q"}},
		{Name: "e", Command: "x", Tool: "Bad Name", Timeout: -time.Second},
		{Name: "f", Command: "x", Tool: "McpG"},
		{Name: "g", Command: "x"},
	})
	for _, want := range []string{
		"mcp.servers.a: set command (a stdio server) or url",
		"mcp.servers.b: set command or url, not both",
		`mcp.servers.c: url "ftp://x" must start with http:// or https://`,
		"mcp.servers.c: args, env and cwd are for stdio servers",
		"mcp.servers.d: headers are for streamable HTTP servers",
		"mcp.servers.d: set include or exclude, not both",
		`mcp.servers.e: tool "Bad Name"`,
		"mcp.servers.e: timeout must not be negative",
		`mcp.servers.g: tool "McpG" is already the tool of mcp.servers.f`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}
