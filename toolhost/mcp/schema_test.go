package mcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// The conversion itself is schema.FromJSON's (tested there); here:
// what the SDK client hands over, the description, and refusal.
func TestConvertSchema(t *testing.T) {
	for _, bad := range []string{`"a string"`, `{"type":"array"}`, `{"type":"object","properties":[1]}`,
		`{"type":"object","properties":{"a":5}}`, `{"type":"object","properties":{"a":{"type":"strnig"}}}`} {
		if _, err := convertSchema("", json.RawMessage(bad)); !errors.Is(err, schema.ErrInvalid) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	s, err := convertSchema("Reads files.", map[string]any{
		"type":       "object",
		"required":   []any{"path"},
		"properties": map[string]any{"path": map[string]any{"type": "string"}, "x-y": map[string]any{"type": "integer"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Params) != 2 || s.Params[0].Name != "path" || !s.Params[0].Required || s.Params[1].WireName() == "x-y" {
		t.Errorf("params = %+v", s.Params)
	}
	if !strings.Contains(string(s.Raw), `"description":"Reads files."`) {
		t.Errorf("raw = %s", s.Raw)
	}
	// A schema's own description is kept; an absent schema takes no arguments.
	if s, _ := convertSchema("ignored", map[string]any{"type": "object", "description": "own"}); !strings.Contains(string(s.Raw), `"own"`) {
		t.Errorf("raw = %s", s.Raw)
	}
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
	for _, tt := range []struct{ server, tool, want string }{
		{"brave-search", "", "McpBraveSearch"},
		{"filesystem", "", "McpFilesystem"},
		{"my_db2", "", "McpMyDb2"},
		{"é-notes", "", "McpNotes"},
		{"brave-search", "Search", "Search"},
	} {
		if got := ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %s, want %s", tt.server, tt.tool, got, tt.want)
		}
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
