package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// An MCP server's new tool list commits the MCP source alone: the new
// tool answers, and no other source is prepared or committed again (no
// plugin rescan). A server's list leaves the source's names as they are.
func TestMCPListCommitsItsSourceAlone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, url := startMCPServer(t)
	hub, cfg := fakehub.StartForNode(t, demohub.Options{})
	cfg.Plugins.Dirs, cfg.Plugins.StateDir = []string{t.TempDir()}, t.TempDir()
	cfg.MCP.Servers = map[string]config.MCPServerConfig{"img": {URL: url}}
	other := &countingSource{}
	n := runCounted(ctx, t, hub, cfg, testTimings(), other)
	answers := func(command string) bool {
		o := n.CallLocal(ctx, "t-"+command, "McpImg", map[string]json.RawMessage{"command": json.RawMessage(`"` + command + `"`)})
		return o.Err == "" && strings.Contains(string(o.Result), "cropped")
	}
	if st := n.MCPServers(); len(st) != 1 || st[0].Tools != 2 {
		t.Fatalf("the server's first list: %+v", st)
	}
	before := other.counts()

	srv.AddTool(&sdk.Tool{Name: "crop", Description: "Crops.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "cropped"}}}, nil
		})
	if !testwait.Poll(ctx, func() bool { return answers("crop") }) {
		t.Fatal("the server's new tool never answered")
	}
	if got := other.counts(); got != before {
		t.Errorf("an MCP server's new list prepared and committed the other source: %v, was %v", got, before)
	}
}
