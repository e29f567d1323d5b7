package node

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/wsproto"
)

// BenchmarkMCPRoundTrip measures what the node adds to an MCP call. Both
// variants call the same in-process MCP server (the SDK's, over streamable
// HTTP on loopback) with the same arguments, one call at a time:
//   - mcp_alone: an SDK client calls it directly: the floor;
//   - through_hub: the fake hub sends execute_tool over a loopback
//     WebSocket with VCP's string arguments; the node checks and coerces
//     them, calls the MCP server with its own SDK client, maps the result
//     and answers tool_result, which the hub reads.
//
// The difference of the two ns/op is the node's share.
func BenchmarkMCPRoundTrip(b *testing.B) {
	_, url := startMCPServer(b)
	b.Run("mcp_alone", func(b *testing.B) {
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(b.Context(), &sdk.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		args := map[string]any{"path": "cat.png", "size": 128}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "resize", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("through_hub", func(b *testing.B) {
		conn := startBenchNode(b, zerolog.Nop(), "McpImg", func(cfg *config.Config) {
			cfg.MCP.Servers = map[string]config.MCPServerConfig{"img": {URL: url}}
			cfg.Node.ExposedTools = []string{"McpImg"}
		})
		args := map[string]json.RawMessage{"command": json.RawMessage(`"resize"`),
			"path": json.RawMessage(`"cat.png"`), "size": json.RawMessage(`"128"`)}
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			res, err := conn.CallExecute(ctx, wsproto.ExecuteTool{ToolName: "McpImg", ToolArgs: args})
			if err != nil || res.Status != wsproto.StatusSuccess {
				b.Fatal(res, err)
			}
		}
	})
}
