package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMCPProblems(t *testing.T) {
	c := Default()
	c.MCP.Servers = map[string]MCPServerConfig{
		"none":  {},
		"both":  {Command: "x", URL: "http://127.0.0.1:1/mcp"},
		"ftp":   {URL: "ftp://h", Cwd: "/srv"},
		"hdr":   {Command: "x", Headers: map[string]string{"A": "b"}, Include: []string{"p"}, Exclude: []string{"q"}},
		"key":   {URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X": "$VCPNODE_KEY", "Y": "$bad-name"}},
		"env":   {Command: "x", Env: map[string]string{"VCPNODE_KEY": "k", "1X": "y"}, Cwd: "rel", Timeout: Duration(time.Hour * 1000)},
		"named": {Command: "x", Tool: "bad name"},
		"a-b":   {Command: "x"},
		"a_b":   {Command: "x"},
		"sse":   {Command: "x", Transport: "sse"},
		"grpc":  {URL: "http://127.0.0.1:1/mcp", Transport: "grpc"},
		"io":    {URL: "http://127.0.0.1:1/mcp", Transport: "stdio"},
	}
	c.MCP.Serve = MCPServeConfig{Tools: []string{""}, Listen: "0.0.0.0:8808"}
	err := c.Validate()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Validate() = %v", err)
	}
	for _, want := range []string{
		"mcp.servers.none: set command (a stdio server) or url",
		"mcp.servers.both: set command or url, not both",
		`mcp.servers.ftp.url: "ftp://h" must start with http:// or https://`,
		"mcp.servers.ftp: args, env and cwd are for stdio servers",
		"mcp.servers.hdr.headers: are for streamable HTTP servers",
		"mcp.servers.hdr: set include or exclude, not both",
		"mcp.servers.key.headers: X: VCPNODE_KEY holds the hub key and is never sent",
		`mcp.servers.key.headers: Y: "$bad-name" is not`,
		"mcp.servers.env.env: VCPNODE_KEY holds the hub key",
		`mcp.servers.env.env: "1X" is not an environment variable name`,
		`mcp.servers.env.cwd: "rel" is not an absolute path`,
		"mcp.servers.env.timeout: must be between 1s",
		`mcp.servers.sse.transport: "sse" needs url, the server's endpoint (for SSE, the URL of its event stream`,
		`mcp.servers.grpc.transport: "grpc" is not one of stdio, http, sse`,
		`mcp.servers.io.transport: "stdio" runs command; a url server is "http" (streamable HTTP) or "sse"`,
		"mcp.serve.tools[0]: tool name is empty",
		`mcp.serve.listen: "0.0.0.0:8808" is not a loopback address`,
		"mcp.serve.token_file: is needed with mcp.serve.listen",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

func TestMCPExampleParses(t *testing.T) {
	cfg, err := Parse([]byte(`
[mcp.servers.filesystem]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"]
env = { LOG_LEVEL = "warn" }
exclude = ["write_file"]
timeout = "60s"

[mcp.servers.notes]
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "$NOTES_MCP_TOKEN" }

[mcp.servers.legacy]
url = "http://127.0.0.1:3002/sse"
transport = "sse"

[mcp.serve]
tools = ["McpFilesystem"]
listen = "127.0.0.1:8808"
token_file = "/etc/vcpnode/mcp-token"
`), "mcp")
	if err != nil {
		t.Fatal(err)
	}
	fs := cfg.MCP.Servers["filesystem"]
	if fs.Tool != "" || fs.Timeout.D() != time.Minute || fs.Env["LOG_LEVEL"] != "warn" {
		t.Errorf("filesystem = %+v", fs)
	}
	if cfg.MCP.Serve.Listen != "127.0.0.1:8808" || cfg.MCP.Servers["notes"].Headers["Authorization"] != "$NOTES_MCP_TOKEN" ||
		cfg.MCP.Servers["legacy"].Transport != MCPTransportSSE {
		t.Errorf("mcp = %+v", cfg.MCP)
	}
}
