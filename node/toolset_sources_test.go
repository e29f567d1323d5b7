package node

import (
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// config check prepares the sources run prepares: the built-ins are
// tools with known commands, an MCP server's tool stands in until it
// runs, and a server's tool that takes a built-in's name is refused, the
// built-in named as the one registered first, as run refuses it.
func TestCheckToolSetPreparesTheSourcesRunPrepares(t *testing.T) {
	cfg := config.Default()
	cfg.MCP.Servers = map[string]config.MCPServerConfig{"web": {URL: "http://127.0.0.1:1/mcp"}}
	ts, err := CheckToolSet(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"internal_request_file", "ReadFile", "McpWeb"} {
		if !slices.Contains(ts.Known, name) {
			t.Errorf("known %v lacks %s", ts.Known, name)
		}
	}
	if cmds, ok := ts.Commands()["ReadFile"]; !ok || len(cmds) != 1 {
		t.Errorf("ReadFile's commands = %v, %v; want them known before anything runs", cmds, ok)
	}
	if _, ok := ts.Commands()["McpWeb"]; ok {
		t.Errorf("an MCP server's commands are known before it runs: %v", ts.Commands())
	}
	if len(ts.Pending) != 1 || ts.Pending[0].Spec().Source != "mcp:web" {
		t.Errorf("pending = %v, want the MCP server's stand-in", ts.Pending)
	}

	cfg.MCP.Servers["clash"] = config.MCPServerConfig{URL: "http://127.0.0.1:1/mcp", Tool: "ReadFile"}
	_, err = CheckToolSet(cfg, nil)
	if err == nil || !strings.Contains(err.Error(), `"ReadFile" from mcp:clash is already registered from`) {
		t.Fatalf("err = %v, want the MCP tool refused against the built-in", err)
	}
}
