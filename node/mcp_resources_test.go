package node

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// newNotesServer is an MCP server with a resource and a prompt.
func newNotesServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	srv.AddResource(&sdk.Resource{URI: "note://todo", Name: "todo", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "- land it\n"}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "review", Description: "Asks for a review.", Arguments: []*sdk.PromptArgument{{Name: "topic", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Review " + req.Params.Arguments["topic"] + "."}}}}, nil
		})
	return srv
}

// TestMCPResourcesAndPromptsThroughHub: a server's resources and prompts
// are commands of its tool, registered with their parameters, and the
// server's string arguments reach them, over streamable HTTP and SSE.
func TestMCPResourcesAndPromptsThroughHub(t *testing.T) {
	srv := newNotesServer()
	streamable := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(sse.Close)
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{
			"notes":  {URL: streamable.URL},
			"legacy": {URL: sse.URL, Transport: "sse"},
		}
		c.Node.ExposedTools = []string{"McpNotes", "McpLegacy"}
	}})
	conn := h.accept()
	msg, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]toolhost.Manifest{}
	for _, raw := range msg.(wsproto.RegisterTools).Tools {
		var m toolhost.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		registered[m.Name] = m
	}
	for _, tool := range []string{"McpNotes", "McpLegacy"} {
		m := registered[tool]
		var names []string
		for _, c := range m.Capabilities.InvocationCommands {
			names = append(names, c.Command)
		}
		if strings.Join(names, " ") != "list_resources read_resource list_prompts get_prompt" {
			t.Fatalf("%s commands = %v", tool, names)
		}
		if read := m.Capabilities.InvocationCommands[1]; !strings.Contains(read.Description, "- uri (string, required)") {
			t.Errorf("read_resource registered as:\n%s", read.Description)
		}

		for _, c := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"command": "list_resources"}, "has 1 resource (read one with read_resource and its uri):\n- note://todo (todo, text/plain)\n"},
			{map[string]any{"command": "read_resource", "uri": "note://todo", "maid": "Nova"}, "resource note://todo:\n- land it\n"},
			{map[string]any{"command": "list_prompts"}, "- review: Asks for a review.\n  arguments:\n  - topic (required)\n"},
			{map[string]any{"command": "get_prompt", "name": "review", "arguments": `{"topic": "the MCP docs"}`}, "prompt review, 1 message[user]\nReview the MCP docs."},
		} {
			res := h.call(conn, tool, c.args)
			if res.Status != wsproto.StatusSuccess {
				t.Fatalf("%s %v = %+v", tool, c.args, res)
			}
			if got := allText(t, res); !strings.Contains(got, c.want) {
				t.Errorf("%s %v:\n%q\nwant it to hold\n%q", tool, c.args, got, c.want)
			}
		}
	}
	for _, st := range h.node.MCPServers() {
		if want := map[string]string{"notes": "http", "legacy": "sse"}[st.Name]; st.State != "running" || st.Transport != want || st.Tools != 0 {
			t.Errorf("status = %+v, want running over %s with no tools", st, want)
		}
	}
}

// allText is the text parts of a result, joined.
func allText(t *testing.T, res wsproto.ToolResult) string {
	t.Helper()
	var body struct {
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(res.Result, &body); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	var b strings.Builder
	for _, p := range body.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}
