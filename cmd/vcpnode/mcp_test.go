package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// mcpSession runs `vcpnode mcp` against d over in-process pipes and
// connects an SDK client to it, as an editor would over the command's stdio.
func mcpSession(t *testing.T, d *testDaemon) *sdk.ClientSession {
	t.Helper()
	return mcpSessionWith(t, d, nil, 0)
}

// mcpSessionWith is mcpSession with client options and the command's
// refresh interval (0: the default).
func mcpSessionWith(t *testing.T, d *testDaemon, opts *sdk.ClientOptions, refresh time.Duration) *sdk.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ta := newTestApp(t)
	ta.app.stdin, ta.app.stdout, ta.app.mcpRefresh = inR, outW, refresh
	exited := make(chan int, 1)
	go func() {
		exited <- ta.run("mcp", "--socket", d.socket)
		outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "editor", Version: "1"}, opts)
	cs, err := client.Connect(d.ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, ta.stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("vcpnode mcp said:\n%s", ta.stderr)
		}
		cs.Close() // closes the command's stdin: it must exit cleanly
		select {
		case code := <-exited:
			if code != exitOK {
				t.Errorf("vcpnode mcp exited %d: %s", code, ta.stderr)
			}
		case <-time.After(20 * time.Second):
			t.Error("vcpnode mcp did not exit after its stdin closed")
		}
	})
	return cs
}

func callText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPCommandServesDaemonTools(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\n")
	d.accept()
	cs := mcpSession(t, d)

	list, err := cs.ListTools(d.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "Echo" {
		t.Fatalf("tools/list = %+v; want the exposed Echo only", list.Tools)
	}
	echo := list.Tools[0]
	if !strings.Contains(echo.Description, "<<<[TOOL_REQUEST]>>>") {
		t.Errorf("an untyped tool's description should carry its invocation text:\n%s", echo.Description)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if !strings.Contains(string(schema), `"additionalProperties":{"type":"string"}`) {
		t.Errorf("inputSchema = %s; an untyped tool takes strings", schema)
	}

	// approval = "ask" holds an MCP client's call for the owner, as a server call.
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "Echo", Arguments: map[string]any{"message": "from the editor"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	d.waitPending(1)
	if code, out, errOut := d.ctl("approve", "1"); code != exitOK {
		t.Fatalf("approve: %d %s %s", code, out, errOut)
	}
	select {
	case res := <-done:
		if res == nil || res.IsError || !strings.Contains(callText(t, res), "from the editor") {
			t.Errorf("approved call = %+v", res)
		}
	case <-d.ctx.Done():
		t.Fatal("no answer after approval")
	}

	// A tool's error is an isError result; a tool not offered is refused.
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "Echo", Arguments: map[string]any{"fail": "disk full"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	d.waitPending(1)
	d.ctl("approve", "2")
	if res := <-done; res == nil || !res.IsError || !strings.Contains(callText(t, res), "disk full") {
		t.Errorf("failing call = %+v", res)
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "SystemInfo", Arguments: map[string]any{}})
	if err == nil && (res == nil || !res.IsError) {
		t.Errorf("a tool not offered to MCP clients ran: %+v", res)
	}
}

func TestMCPResultMapping(t *testing.T) {
	res := mcpResult(json.RawMessage(`{"content":[{"type":"text","text":"a dot"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},` +
		`{"type":"image_url","image_url":{"url":"https://example.org/x.png"}}],"structuredContent":{"n":1}}`))
	if len(res.Content) != 3 {
		t.Fatalf("content = %+v", res.Content)
	}
	if img, ok := res.Content[1].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data[:4]) != "\x89PNG" {
		t.Errorf("image = %+v", res.Content[1])
	}
	if txt, ok := res.Content[2].(*sdk.TextContent); !ok || txt.Text != "image: https://example.org/x.png" {
		t.Errorf("linked image = %+v", res.Content[2])
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"n":1}` {
		t.Errorf("structured = %s", b)
	}
	if res := mcpResult(json.RawMessage(`{"weird":true}`)); callTextOf(res) != `{"weird":true}` {
		t.Errorf("a result without content parts: %+v", res.Content)
	}
}

func callTextOf(res *sdk.CallToolResult) string {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func TestMCPHTTPRefusesNonLoopbackAndLooseToken(t *testing.T) {
	d := startDaemon(t, "")
	d.accept()
	ta := newTestApp(t)
	if code := ta.run("mcp", "--http", "--listen", "0.0.0.0:0", "--socket", d.socket); code != exitUsage ||
		!strings.Contains(ta.stderr.String(), "is not a loopback address") {
		t.Errorf("non-loopback: %d %s", code, ta.stderr)
	}
	tok := writeFile(t, "token", "0123456789abcdef0123", 0o644)
	cfg := writeFile(t, "mcp.toml", testHubConfig(d.hub, "[mcp.serve]\nlisten = \"127.0.0.1:0\"\ntoken_file = \""+tok+"\"\n"), 0o600)
	ta = newTestApp(t)
	if code := ta.run("mcp", "--http", "--config", cfg, "--socket", d.socket); code == exitOK ||
		!strings.Contains(ta.stderr.String(), "chmod 600") {
		t.Errorf("a token file others can read: %d %s", code, ta.stderr)
	}
}

// bearerTransport adds a token to every request of the SDK's HTTP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpHTTPSession runs `vcpnode mcp --http` against d and connects an SDK client
// with the bearer token; it returns the URL, the session and a stop that
// closes the session and checks the command exits cleanly on SIGTERM.
func mcpHTTPSession(t *testing.T, d *testDaemon) (string, *sdk.ClientSession, func()) {
	t.Helper()
	return mcpHTTPSessionWith(t, d, nil)
}

// mcpHTTPSessionWith is mcpHTTPSession with client options.
func mcpHTTPSessionWith(t *testing.T, d *testDaemon, opts *sdk.ClientOptions) (string, *sdk.ClientSession, func()) {
	t.Helper()
	const token = "0123456789abcdef0123456789abcdef"
	tok := writeFile(t, "token", token+"\n", 0o600)
	cfg := writeFile(t, "mcp.toml", testHubConfig(d.hub, "[mcp.serve]\nlisten = \"127.0.0.1:0\"\ntoken_file = \""+tok+"\"\n"), 0o600)
	ta := newTestApp(t)
	exited := make(chan int, 1)
	go func() { exited <- ta.run("mcp", "--http", "--config", cfg, "--socket", d.socket) }()
	var url string
	if !testwait.Poll(d.ctx, func() bool {
		_, rest, ok := strings.Cut(ta.stderr.String(), "serving MCP over HTTP at ")
		url, _, _ = strings.Cut(rest, " ")
		return ok && strings.HasSuffix(url, "/")
	}) {
		t.Fatalf("timed out waiting for the listening line:\n%s", ta.stderr.String())
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "web", Version: "1"}, opts)
	cs, err := client.Connect(d.ctx, &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return url, cs, func() {
		cs.Close()
		ta.sigs <- syscall.SIGTERM
		select {
		case code := <-exited:
			if code != exitOK {
				t.Errorf("exit %d: %s", code, ta.stderr)
			}
		case <-d.ctx.Done():
			t.Fatal("vcpnode mcp --http did not stop on SIGTERM")
		}
	}
}

func TestMCPOverHTTPWithBearerToken(t *testing.T) {
	d := startDaemon(t, "")
	d.accept()
	url, cs, stop := mcpHTTPSession(t, d)
	if resp, err := http.Post(url, "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %v %v", resp, err)
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "Echo", Arguments: map[string]any{"message": "over http"}})
	if err != nil || res.IsError || !strings.Contains(callText(t, res), "over http") {
		t.Errorf("call = %+v %v", res, err)
	}
	stop()
}

// TestMCPToolSchemasArePromptSchemas: an MCP client listing tools gets for
// each the parameters `tools --prompt --format openai` gives it — a
// plugin without a schema too, with the names its examples pass — plus
// string extras for an untyped tool.
func TestMCPToolSchemasArePromptSchemas(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, typedDaemonConfig+"[tools.UnitConverter]\nexpose = true\n[tools.TextStats]\nexpose = true\n"+
		"[plugins]\ndirs = [\""+examples+"\"]\n", thumbTool{})
	d.accept()
	var prompt struct{ Text string }
	d.ctlJSON(&prompt, "tools", "--prompt", "--format", "openai")
	var fns []struct {
		Function struct {
			Name       string
			Parameters map[string]any
		}
	}
	if err := json.Unmarshal([]byte(prompt.Text), &fns); err != nil {
		t.Fatalf("%v\n%s", err, prompt.Text)
	}
	want := map[string]map[string]any{}
	for _, f := range fns {
		want[f.Function.Name] = f.Function.Parameters
	}

	list, err := mcpSession(t, d).ListTools(d.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		raw, _ := json.Marshal(tool.InputSchema)
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		extra, untyped := got["additionalProperties"]
		delete(got, "additionalProperties")
		if untyped == slices.Contains([]string{"Thumb", "DirectoryTree", "ReadFile", "SearchFiles"}, tool.Name) {
			t.Errorf("%s: additionalProperties = %v", tool.Name, extra)
		}
		if !reflect.DeepEqual(got, want[tool.Name]) {
			t.Errorf("%s: inputSchema\n%s\nwant the prompt's parameters\n%v", tool.Name, raw, want[tool.Name])
		}
		if props, _ := got["properties"].(map[string]any); len(props) == 0 && tool.Name != "NodeInfo" {
			t.Errorf("%s is offered with no properties: %s", tool.Name, raw)
		}
	}
	slices.Sort(names)
	if len(names) != len(want) || !slices.Contains(names, "UnitConverter") || !slices.Contains(names, "Echo") {
		t.Errorf("tools/list = %v; want the %d tools the prompt lists", names, len(want))
	}
	// The plugin's examples pass these; a client is told about each.
	for _, p := range []string{"value", "from", "to", "command"} {
		if _, ok := want["UnitConverter"]["properties"].(map[string]any)[p]; !ok {
			t.Errorf("UnitConverter lacks %q: %v", p, want["UnitConverter"])
		}
	}
}
