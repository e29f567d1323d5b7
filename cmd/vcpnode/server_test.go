package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// serverBridge is a server whose VCPToolBridge offers two tools.
func serverBridge() *demohub.Bridge {
	cmd := func(name, desc, example string) map[string]any {
		return map[string]any{"command": name, "description": desc, "example": example}
	}
	return &demohub.Bridge{
		Plugins: []demohub.BridgePlugin{
			{Name: "SciCalculator", DisplayName: "Calculator", Description: "Evaluates expressions.",
				InvocationCommands: []map[string]any{cmd("calc", "expression (string, required)",
					"<<<[TOOL_REQUEST]>>>\ntool_name:「始」SciCalculator「末」,\nexpression:「始」1+1「末」\n<<<[END_TOOL_REQUEST]>>>")}},
			{Name: "DiaryWriter", Description: "Writes the diary.", InvocationCommands: []map[string]any{cmd("write", "text (string)", "")}},
		},
		Run: func(_ context.Context, tool string, args map[string]json.RawMessage) (any, error) {
			var expr string
			_ = json.Unmarshal(args["expression"], &expr)
			if expr == "1/0" {
				return nil, errors.New(`{"plugin_error":"division by zero"}`)
			}
			return map[string]any{"content": []map[string]any{{"type": "text", "text": tool + " says " + expr + " = 2"}}}, nil
		},
	}
}

// waitServerTools waits until the daemon has the server's list.
func (d *testDaemon) waitServerTools() {
	d.t.Helper()
	d.waitServerToolsN(2)
}

// waitServerToolsN waits until the daemon has the server's list of n tools.
func (d *testDaemon) waitServerToolsN(n int) {
	d.t.Helper()
	c := controlapi.NewControlClient(d.socket)
	defer c.Close()
	if !testwait.Poll(d.ctx, func() bool {
		res, err := c.ServerTools(d.ctx, false)
		return err == nil && res.State == "offered" && len(res.Tools) == n
	}) {
		d.t.Fatal("the daemon never got the server's tools")
	}
}

func TestServerToolsAndCallCommands(t *testing.T) {
	d := startDaemonHub(t, demohub.Options{Bridge: serverBridge()}, "[bridge]\noffer = [\"Sci*\"]\n")
	d.accept()
	d.waitServerTools()

	code, out, errOut := d.ctl("server", "tools")
	if code != exitOK || !strings.Contains(out, "the server offers 2 tools to nodes") ||
		!strings.Contains(out, "SciCalculator (Calculator)  as vcp_SciCalculator, offered to MCP clients") ||
		!strings.Contains(out, "DiaryWriter  as vcp_DiaryWriter, not offered to MCP clients") ||
		!strings.Contains(out, "command calc: expression (string, required)") {
		t.Fatalf("server tools: %d\n%s\n%s", code, out, errOut)
	}
	var list controlapi.ServerToolsResponse
	d.ctlJSON(&list, "server", "tools", "--refresh")
	if list.State != "offered" || len(list.Tools) != 2 || list.Tools[1].Name != "SciCalculator" || !list.Tools[1].Offered {
		t.Fatalf("server tools --json = %+v", list)
	}

	code, out, errOut = d.ctl("server", "call", "SciCalculator", "expression=1+1")
	if code != exitOK || !strings.Contains(out, "SciCalculator says 1+1 = 2") ||
		!strings.Contains(errOut, "call of the server's SciCalculator through its bridge") {
		t.Fatalf("server call: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = d.ctl("server", "call", "SciCalculator", "expression=1/0")
	if code == exitOK || !strings.Contains(errOut, "division by zero") {
		t.Fatalf("server call of a failing tool: %d %s", code, errOut)
	}
	if code, out, _ := d.ctl("status"); code != exitOK || !strings.Contains(out, "the server offers 2 tools to nodes, 1 offered to MCP clients") {
		t.Fatalf("status:\n%s", out)
	}
	// A name the server does not offer is named as such, by its name on
	// the server, with the list's size and age and the likely one.
	for _, name := range []string{"SciCalculater", "vcp_SciCalculater"} {
		code, _, errOut = d.ctl("server", "call", name, "expression=1+1")
		if code == exitOK || !strings.Contains(errOut, `the server's list has no tool "SciCalculater" (2 tools, received `) ||
			!strings.Contains(errOut, " ago); did you mean SciCalculator?; vcpnode server tools lists them") ||
			strings.Contains(errOut, "vcp_SciCalculater") {
			t.Fatalf("server call of a misspelt tool %s: %d %s", name, code, errOut)
		}
	}
	// A server tool's bare name given to `call` points at its name here.
	code, _, errOut = d.ctl("call", "SciCalculator", "expression=1+1")
	if code == exitOK || !strings.Contains(errOut, `unknown tool "SciCalculator" (the server's tool SciCalculator is vcp_SciCalculator here: vcpnode server call SciCalculator)`) {
		t.Fatalf("call of a server tool's bare name: %d %s", code, errOut)
	}
}

// fakeControlSocket serves handler as a daemon's control socket, until t ends.
func fakeControlSocket(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

// TestServerCallGoesStraightToTheDaemon: `server call` makes one request,
// the call, and prints the daemon's answer about a name it has no tool of.
func TestServerCallGoesStraightToTheDaemon(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	sock := fakeControlSocket(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(controlapi.ErrorResponse{Error: `the server's list has no tool "Nope" (the daemon's words)`})
	})

	ta := newTestApp(t)
	code := ta.run("server", "call", "Nope", "x=1", "--socket", sock)
	if code == exitOK || !strings.Contains(ta.stderr.String(), "(the daemon's words)") {
		t.Fatalf("server call: %d\n%s", code, ta.stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "POST "+controlapi.PathCall {
		t.Fatalf("the daemon was asked %v, want the call alone", asked)
	}
}

// TestMCPCallOfAnOfferedToolTheServerDropped: an MCP client calling a
// server tool [bridge] offer names, which the server's list does not hold
// (its list changed since the client listed), is told so, and no other
// tool is named to it.
func TestMCPCallOfAnOfferedToolTheServerDropped(t *testing.T) {
	d := startDaemonHub(t, demohub.Options{Bridge: serverBridge()}, "[bridge]\noffer = [\"*\"]\n")
	d.accept()
	d.waitServerTools()
	c := controlapi.NewControlClient(d.socket)
	defer c.Close()
	_, err := c.Call(d.ctx, controlapi.CallRequest{Tool: "vcp_SciCalculater", Via: controlapi.ViaMCP})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "vcp_SciCalculater": the server's list has no tool "SciCalculater" (2 tools, received `) ||
		strings.Contains(err.Error(), "SciCalculator") || strings.Contains(err.Error(), "vcpnode server tools") {
		t.Fatalf("MCP call of a dropped server tool: %v", err)
	}
}

func TestServerToolsStatusWithoutBridge(t *testing.T) {
	d := startDaemonHub(t, demohub.Options{Bridge: &demohub.Bridge{Disabled: true}}, "")
	d.accept()
	var out string
	if !testwait.Poll(d.ctx, func() bool {
		_, out, _ = d.ctl("status")
		return strings.Contains(out, "the server offers no tools to nodes: its VCPToolBridge plugin is missing or turned off")
	}) {
		t.Fatalf("status never said the server offers no tools:\n%s", out)
	}
	// A call says why there is nothing to call, not "unknown tool".
	code, _, errOut := d.ctl("server", "call", "SciCalculator", "expression=1+1")
	if code == exitOK || !strings.Contains(errOut, "the server offers no tools to nodes: its VCPToolBridge plugin is missing or turned off") {
		t.Fatalf("server call without a bridge: %d %s", code, errOut)
	}
}

// An MCP client sees only the offered server tool, is held by approval =
// "ask" until the owner approves, and is refused the one not offered.
func TestMCPOffersServerToolsOptIn(t *testing.T) {
	d := startDaemonHub(t, demohub.Options{Bridge: serverBridge()},
		"[bridge]\noffer = [\"Sci*\"]\n[tools.vcp_SciCalculator]\napproval = \"ask\"\n")
	d.accept()
	d.waitServerTools()
	cs := mcpSession(t, d)
	list, err := cs.ListTools(d.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var sci *sdk.Tool
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name == "vcp_SciCalculator" {
			sci = tl
		}
	}
	if sci == nil || strings.Contains(strings.Join(names, ","), "vcp_DiaryWriter") {
		t.Fatalf("tools/list = %v; want vcp_SciCalculator and not vcp_DiaryWriter", names)
	}
	if schema, _ := json.Marshal(sci.InputSchema); !strings.Contains(string(schema), `"expression"`) {
		t.Errorf("inputSchema = %s; want the parameter of the invocation example", schema)
	}
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "vcp_SciCalculator", Arguments: map[string]any{"expression": "1+1"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	d.waitPending(1)
	select {
	case res := <-done:
		t.Fatalf("the call ran before approval: %+v", res)
	default:
	}
	if code, out, errOut := d.ctl("approve", "1"); code != exitOK {
		t.Fatalf("approve: %d %s %s", code, out, errOut)
	}
	select {
	case res := <-done:
		if res == nil || res.IsError || !strings.Contains(callText(t, res), "SciCalculator says 1+1 = 2") {
			t.Fatalf("approved call = %+v", res)
		}
	case <-d.ctx.Done():
		t.Fatal("no answer after approval")
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "vcp_DiaryWriter", Arguments: map[string]any{"text": "x"}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("a server tool not offered ran for an MCP client: %+v", res)
	}
}

func TestMCPOverHTTPCallsAnOfferedServerTool(t *testing.T) {
	d := startDaemonHub(t, demohub.Options{Bridge: serverBridge()}, "[bridge]\noffer = [\"SciCalculator\"]\n")
	d.accept()
	d.waitServerTools()
	_, cs, stop := mcpHTTPSession(t, d)
	list, err := cs.ListTools(d.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range list.Tools {
		found = found || tl.Name == "vcp_SciCalculator"
		if tl.Name == "vcp_DiaryWriter" {
			t.Errorf("vcp_DiaryWriter offered over HTTP without [bridge] offer")
		}
	}
	if !found {
		t.Fatalf("vcp_SciCalculator not listed over HTTP")
	}
	res, err := cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "vcp_SciCalculator", Arguments: map[string]any{"expression": "1+1"}})
	if err != nil || res.IsError || !strings.Contains(callText(t, res), "SciCalculator says 1+1 = 2") {
		t.Errorf("call = %+v %v", res, err)
	}
	res, err = cs.CallTool(d.ctx, &sdk.CallToolParams{Name: "vcp_DiaryWriter", Arguments: map[string]any{"text": "x"}})
	if err == nil && (res == nil || !res.IsError) {
		t.Errorf("a server tool not offered ran over HTTP: %+v", res)
	}
	stop()
}
