package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/node"
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

	var st node.StatusResponse
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
