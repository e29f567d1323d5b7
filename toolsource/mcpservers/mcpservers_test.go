package mcpservers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolsource"
)

func withServers(servers map[string]config.MCPServerConfig) config.Config {
	cfg := config.Default()
	cfg.MCP.Servers = servers
	return cfg
}

// Prepare names one tool per server, by the config, and starts nothing.
func TestPrepareNamesOneToolPerServerAndStartsNothing(t *testing.T) {
	s := New()
	p, err := s.Prepare(withServers(map[string]config.MCPServerConfig{
		"web":  {URL: "http://127.0.0.1:1/mcp"},
		"docs": {URL: "http://127.0.0.1:1/mcp", Tool: "Docs"},
	}), toolsource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Discard()
	var got []string
	for _, sp := range p.Specs() {
		got = append(got, sp.Name+"@"+sp.Source)
	}
	if strings.Join(got, ",") != "Docs@mcp:docs,McpWeb@mcp:web" {
		t.Errorf("specs = %v, want one per server, by name", got)
	}
	if s.Servers() != nil || s.Tools() != nil {
		t.Errorf("Prepare started something: %+v", s.Servers())
	}
}

// Two servers that would offer one tool name refuse the config.
func TestPrepareRefusesTwoServersOfOneTool(t *testing.T) {
	_, err := New().Prepare(withServers(map[string]config.MCPServerConfig{
		"a": {URL: "http://127.0.0.1:1/mcp", Tool: "Same"},
		"b": {URL: "http://127.0.0.1:1/mcp", Tool: "Same"},
	}), toolsource.Env{})
	if err == nil || !strings.HasPrefix(err.Error(), "mcp: ") || !strings.Contains(err.Error(), "already the tool of") {
		t.Fatalf("err = %v, want the clash refused", err)
	}
}

// Once closed, a config with servers is refused; one without is not.
func TestClosedSourceRefusesServers(t *testing.T) {
	s := New()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prepare(withServers(map[string]config.MCPServerConfig{"web": {URL: "http://127.0.0.1:1/mcp"}}), toolsource.Env{}); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("err = %v, want mcp.ErrClosed", err)
	}
	p, err := s.Prepare(config.Default(), toolsource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Specs()) != 0 {
		t.Errorf("a config without servers: specs %v", p.Specs())
	}
}
