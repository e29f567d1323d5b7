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
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// startMCPServer serves an MCP server built with the SDK over streamable
// HTTP on loopback, with tools that answer with the arguments they got.
func startMCPServer(t testing.TB) (*sdk.Server, string) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "imgtools", Version: "0.1.0"}, nil)
	echo := func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "resize", Description: "Resizes an image.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"path":{"type":"string","description":"the image"},"size":{"type":"integer"},"keep-ratio":{"type":"boolean"}},"required":["path","size"]}`)}, echo)
	srv.AddTool(&sdk.Tool{Name: "shell", Description: "Runs a command line.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}, echo)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func mcpRegistered(t *testing.T, h *harness, conn *demohub.Conn, name string) toolhost.Manifest {
	t.Helper()
	msg, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range msg.(wsproto.RegisterTools).Tools {
		var m toolhost.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("%s is not in register_tools: %s", name, msg.(wsproto.RegisterTools).Tools)
	return toolhost.Manifest{}
}

// TestMCPServerThroughHub: an MCP server is registered as one tool with
// generated invocation text, and the server's stringly-typed calls reach
// it coerced, with aliases mapped back; a new MCP tool re-registers.
func TestMCPServerThroughHub(t *testing.T) {
	srv, url := startMCPServer(t)
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"img": {URL: url}}
		c.Node.ExposedTools = []string{"McpImg"}
	}})
	conn := h.accept()
	m := mcpRegistered(t, h, conn, "McpImg")
	if m.Description == "" || len(m.Capabilities.InvocationCommands) != 2 {
		t.Fatalf("manifest = %+v", m)
	}
	resize := m.Capabilities.InvocationCommands[0]
	wantDesc := "A tool of the MCP server \"imgtools\".\nCommand resize: Resizes an image. Pass command:「始」resize「末」.\nParameters:\n" +
		"- path (string, required): the image\n- size (integer, required)\n" +
		"- keep_ratio (boolean, optional) (the parameter \"keep-ratio\")"
	wantExample := "<<<[TOOL_REQUEST]>>>\ntool_name:「始」McpImg「末」,\ncommand:「始」resize「末」,\npath:「始」<path>「末」,\nsize:「始」1「末」\n<<<[END_TOOL_REQUEST]>>>"
	if resize.Description != wantDesc || resize.Example != wantExample {
		t.Errorf("resize command:\n%s\n%s\nwant\n%s\n%s", resize.Description, resize.Example, wantDesc, wantExample)
	}

	res := h.call(conn, "McpImg", map[string]any{"command": "resize", "path": "cat.png", "size": "128", "keep_ratio": "true", "maid": "Nova"})
	if res.Status != wsproto.StatusSuccess {
		t.Fatalf("resize: %+v", res)
	}
	if got := firstText(t, res); got != `{"keep-ratio":true,"path":"cat.png","size":128}` {
		t.Errorf("the MCP server received %s", got)
	}
	res = h.call(conn, "McpImg", map[string]any{"command": "shell", "command_": "ls -l"})
	if got := firstText(t, res); res.Status != wsproto.StatusSuccess || got != `{"command":"ls -l"}` {
		t.Errorf("shell: %+v %s", res, got)
	}
	res = h.call(conn, "McpImg", map[string]any{"command": "resize", "size": "big"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, `missing required argument \"path\"`) &&
		!strings.Contains(res.Error, `missing required argument "path"`) {
		t.Errorf("a wrong call: %+v", res)
	}
	if st := h.node.MCPServers(); len(st) != 1 || st[0].State != "running" || st[0].Tools != 2 {
		t.Errorf("status = %+v", st)
	}

	// A tool added on the server: list_changed, rebuilt registration, reconnect.
	srv.AddTool(&sdk.Tool{Name: "crop", Description: "Crops.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "cropped"}}}, nil
		})
	conn2 := h.accept()
	if m := mcpRegistered(t, h, conn2, "McpImg"); len(m.Capabilities.InvocationCommands) != 3 {
		t.Errorf("after list_changed: %+v", m.Capabilities.InvocationCommands)
	}
	if res := h.call(conn2, "McpImg", map[string]any{"command": "crop"}); firstText(t, res) != "cropped" {
		t.Errorf("crop: %+v", res)
	}
}

// TestMCPReloadRemovesServer: a reload without the server stops it and
// reconnects without its tool; a bad table keeps the old config.
func TestMCPReload(t *testing.T) {
	_, url := startMCPServer(t)
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"img": {URL: url}, "down": {URL: "http://127.0.0.1:1/mcp"}}
		c.Node.ExposedTools = []string{"McpImg"}
	}})
	conn := h.accept()
	mcpRegistered(t, h, conn, "McpImg")

	// tools --all shows each server's state; one that never listed its
	// tools is a row of its own saying why.
	_, client := startControl(t, h, "")
	tools, err := client.Tools(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var img, down controlapi.ToolStatus
	for _, ts := range tools {
		switch ts.Source {
		case "mcp:img":
			img = ts
		case "mcp:down":
			down = ts
		}
	}
	if img.Name != "McpImg" || img.State != "running" || !img.Exposed {
		t.Errorf("img = %+v", img)
	}
	if down.Name != "McpDown" || down.Skipped == "" || down.Skipped == "running" || !strings.Contains(down.Reason, "its tools were never listed") {
		t.Errorf("down = %+v", down)
	}

	bad := h.cfg
	bad.MCP.Servers = map[string]config.MCPServerConfig{"img": {URL: url, Command: "x"}}
	if _, err := h.node.Reload(bad); err == nil || !strings.Contains(err.Error(), "set command or url, not both") {
		t.Fatalf("bad reload: %v", err)
	}
	if st := h.node.MCPServers(); len(st) != 2 || st[1].Name != "img" || st[1].State != "running" {
		t.Fatalf("after a bad reload: %+v", st)
	}

	off := h.cfg
	off.MCP.Servers = nil
	rep, err := h.node.Reload(off)
	if err != nil || !rep.Reconnected {
		t.Fatalf("reload: %+v %v", rep, err)
	}
	if len(h.node.MCPServers()) != 0 {
		t.Errorf("the removed server is still there: %+v", h.node.MCPServers())
	}
	for _, ti := range h.node.Tools() {
		if ti.Spec.Name == "McpImg" {
			t.Error("McpImg is still registered")
		}
	}
}

// TestMCPServerDownIsNotUnknown: the tool of an MCP server that has not
// come up yet answers that its server is not running, and why, rather than
// "unknown tool": through `vcpnode call`, `vcpnode mcp` and the hub.
func TestMCPServerDownIsNotUnknown(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"broken": {Command: "/bin/sh",
			Args: []string{"-c", "echo 'npm error 404 Not Found - GET https://registry.npmjs.org/nope' >&2; echo 'npm error A complete log of this run' >&2; exit 1"}}}
		c.Node.ExposedTools = []string{"McpBroken"}
	}})
	conn := h.accept()
	const want = "MCP server broken is not running ("
	for _, via := range []string{"", controlapi.ViaMCP} {
		res, err := h.node.Call(h.ctx, controlapi.CallRequest{Tool: "McpBroken", Via: via})
		if err != nil || res.OK || !strings.HasPrefix(res.Error, want) || !strings.Contains(res.Error, "npm error 404 Not Found") {
			t.Errorf("call via %q: %+v, %v", via, res, err)
		}
	}
	if res := h.call(conn, "McpBroken", nil); res.Status != wsproto.StatusError || !strings.HasPrefix(res.Error, want) {
		t.Errorf("over the hub: %+v", res)
	}
}
