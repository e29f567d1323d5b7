package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/controlapi"
)

// testMCPServer serves an SDK MCP server with the named tools over
// streamable HTTP on loopback.
func testMCPServer(t *testing.T, tools ...string) (*sdk.Server, string) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "testtools", Version: "1"}, nil)
	for _, name := range tools {
		addEchoMCPTool(srv, name)
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

func addEchoMCPTool(srv *sdk.Server, name string) {
	srv.AddTool(&sdk.Tool{Name: name, Description: "answers " + name, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
		})
}

// TestStatusShowsMCPServers: status (JSON and text) shows each MCP server:
// one running with its tool count, one that keeps exiting as restarting
// with backoff and its last stderr line, with what looks like a key
// redacted.
func TestStatusShowsMCPServers(t *testing.T) {
	_, url := testMCPServer(t, "alpha", "beta")
	d := startDaemon(t, "[mcp.servers.img]\nurl = \""+url+"\"\n\n"+
		"[mcp.servers.broken]\ncommand = \"/bin/sh\"\n"+
		"args = [\"-c\", \"echo 'fatal: bad token VCP_Key=s3cr3tvalue' >&2; exit 3\"]\n")
	d.accept()

	var st controlapi.StatusResponse
	for {
		d.ctlJSON(&st, "status")
		if len(st.MCPServers) == 2 && st.MCPServers[0].State == "restarting" && st.MCPServers[0].LastError != "" &&
			st.MCPServers[1].State == "running" {
			break
		}
		select {
		case <-d.ctx.Done():
			t.Fatalf("status never showed both MCP servers settled: %+v", st.MCPServers)
		case <-time.After(20 * time.Millisecond):
		}
	}
	broken, img := st.MCPServers[0], st.MCPServers[1]
	if broken.Name != "broken" || broken.Tool != "McpBroken" || broken.Transport != "stdio" || broken.Attempt < 1 || broken.Restarts < 1 {
		t.Errorf("broken = %+v", broken)
	}
	if !strings.Contains(broken.LastError, "fatal: bad token") || strings.Contains(broken.LastError, "s3cr3tvalue") {
		t.Errorf("broken's last error = %q; want its stderr line, key redacted", broken.LastError)
	}
	if img.Name != "img" || img.Tools != 2 || img.Transport != "http" || img.LastError != "" {
		t.Errorf("img = %+v", img)
	}

	// The text form: one line per server. Poll until a status lands in a
	// backoff wait (the server is retried within a second).
	for {
		_, out, _ := d.ctl("status")
		squeezed := strings.Join(strings.Fields(out), " ")
		if strings.Contains(out, "s3cr3tvalue") {
			t.Fatalf("status shows the key:\n%s", out)
		}
		if strings.Contains(squeezed, "mcp broken restarting with backoff: next attempt in") {
			for _, want := range []string{"last error: ", "fatal: bad token VCP_Key=REDACTED", "mcp img running for ", ", 2 tools as McpImg (http)"} {
				if !strings.Contains(squeezed, want) {
					t.Errorf("status lacks %q:\n%s", want, out)
				}
			}
			return
		}
		select {
		case <-d.ctx.Done():
			t.Fatalf("status never showed the restarting server:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestMCPCommandFollowsDaemonTools: after a daemon reload changes the
// offered tools, `vcpnode mcp` tells its client (tools/list_changed) and
// lists the new set; the new tool can be called.
func TestMCPCommandFollowsDaemonTools(t *testing.T) {
	d := startDaemon(t, "")
	d.accept()
	changed := make(chan struct{}, 16)
	cs := mcpSessionWith(t, d, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}, 50*time.Millisecond)
	names := func() []string {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range list.Tools {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"Echo"}) {
		t.Fatalf("tools/list = %v; want [Echo]", got)
	}

	// Offer NodeInfo instead of Echo, and reload the daemon.
	path := d.configFile()
	if err := os.WriteFile(path, []byte(strings.Replace(testHubConfig(d.hub, ""),
		`exposed_tools = ["Echo"]`, `exposed_tools = ["NodeInfo"]`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := d.ctl("reload"); code != exitOK {
		t.Fatalf("reload: %s", errOut)
	}
	for {
		select {
		case <-changed:
		case <-d.ctx.Done():
			t.Fatalf("the client never heard notifications/tools/list_changed; tools/list = %v", names())
		}
		// Additions and removals notify apart: wait for the whole change.
		if got := names(); slices.Equal(got, []string{"NodeInfo"}) {
			break
		}
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "NodeInfo", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Errorf("the newly offered tool: %+v %v", res, err)
	}
	res, err = cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "Echo", Arguments: map[string]any{"message": "x"}})
	if err == nil && !res.IsError {
		t.Errorf("a tool no longer offered ran: %+v", res)
	}
}
