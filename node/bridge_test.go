package node

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

func bridgeHarness(t *testing.T, b *demohub.Bridge, cfg func(*config.Config)) *harness {
	t.Helper()
	return startHarness(t, harnessOpt{
		hubOpts: demohub.Options{Bridge: b},
		config:  cfg,
		timings: func(tm *timings) { tm.bridgeListWait = 300 * time.Millisecond },
	})
}

func (h *harness) waitServerState(want bridge.State) {
	h.t.Helper()
	if !testwait.Poll(h.ctx, func() bool { return h.node.bridge.Status().State == want }) {
		h.t.Fatalf("server tools never reached %q: %+v", want, h.node.bridge.Status())
	}
}

func (h *harness) hasTool(name string) bool {
	for _, ti := range h.node.Tools() {
		if ti.Spec.Name == name {
			return true
		}
	}
	return false
}

func TestServerToolsListedOnConnectAsIndexJSExports(t *testing.T) {
	t.Parallel()
	h := bridgeHarness(t, &demohub.Bridge{Plugins: fakehub.ServerPlugins(), ExcludedTools: []string{"VCPLog", "VCPInfo", "VCPToolBridge"},
		ExcludedDisplayKeywords: []string{"[AIO]"}, Run: fakehub.ServerRuns(nil)}, nil)
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.waitServerState(bridge.StateOffered)
	got := h.node.ServerTools(h.ctx, false)
	var names []string
	for _, st := range got.Tools {
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "SciCalculator,VideoGen" {
		t.Fatalf("server tools = %v, want SciCalculator,VideoGen (exclusions, distributed and command-less plugins left out)", names)
	}
	sc := got.Tools[0]
	if sc.Local != "vcp_SciCalculator" || sc.DisplayName != "科学计算器" || len(sc.Commands) != 1 || !strings.Contains(sc.Commands[0].Example, "tool_name:「始」SciCalculator「末」") {
		t.Fatalf("SciCalculator = %+v", sc)
	}
	if !testwait.Poll(h.ctx, func() bool { return h.hasTool("vcp_SciCalculator") && h.hasTool("vcp_VideoGen") }) {
		t.Fatalf("the server's tools never joined the registry")
	}
	for _, ti := range h.node.Tools() {
		if ti.Spec.FromServer && ti.Exposure.Exposed {
			t.Errorf("%s is exposed to the server: %s", ti.Spec.Name, ti.Exposure.Reason)
		}
	}
	manifests, err := h.node.disp.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		if strings.Contains(string(m), "vcp_") {
			t.Errorf("a server tool is in register_tools: %s", m)
		}
	}
	local := 0
	for _, ti := range h.node.Tools() {
		if !ti.Spec.FromServer && !ti.Spec.Implicit {
			local++
		}
	}
	if st := h.node.Status(); st.ServerTools == nil || st.ServerTools.Tools != 2 || st.Tools.Registered != local {
		t.Fatalf("status = %+v / %+v, want 2 server tools and %d local ones registered", st.ServerTools, st.Tools, local)
	}
	// Not offered to MCP clients: [bridge] offer is empty.
	for _, mt := range h.node.MCPTools() {
		if strings.HasPrefix(mt.Name, "vcp_") {
			t.Errorf("%s offered to MCP clients without [bridge] offer", mt.Name)
		}
	}
}

func TestServerToolCallResultAndError(t *testing.T) {
	t.Parallel()
	h := bridgeHarness(t, &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(nil)}, nil)
	h.accept()
	h.waitServerState(bridge.StateOffered)
	testwait.Poll(h.ctx, func() bool { return h.hasTool("vcp_SciCalculator") })

	o := h.node.CallLocal(h.ctx, "r1", "vcp_SciCalculator", map[string]json.RawMessage{"expression": json.RawMessage(`"1+1"`)})
	if !o.OK() || !strings.Contains(string(o.Result), "= 2 (1+1)") {
		t.Fatalf("call = %+v (result %s), want the server's answer", o, o.Result)
	}
	o = h.node.CallLocal(h.ctx, "r2", "vcp_SciCalculator", map[string]json.RawMessage{"expression": json.RawMessage(`"boom"`)})
	if o.OK() || !strings.Contains(o.Err, "division by zero in boom") {
		t.Fatalf("error call = %+v, want the server's plugin_error", o)
	}
	// A tool the server lists to nobody (excluded, or unknown) is never sent.
	_, err := h.node.bridge.Call(h.ctx, "Nope", nil, nil)
	if !errors.Is(err, bridge.ErrNotOffered) {
		t.Fatalf("call of an unlisted tool: %v, want ErrNotOffered", err)
	}
}

func TestServerToolAsyncProgressAndLateResult(t *testing.T) {
	t.Parallel()
	started := make(chan map[string]json.RawMessage, 1)
	h := bridgeHarness(t, &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(started)}, nil)
	h.accept()
	h.waitServerState(bridge.StateOffered)

	progress := make(chan bridge.Progress, 8)
	type res struct {
		raw json.RawMessage
		err error
	}
	done := make(chan res, 1)
	go func() {
		ctx := bridge.WithProgress(h.ctx, func(p bridge.Progress) { progress <- p })
		raw, err := h.node.bridge.Call(ctx, "VideoGen", map[string]json.RawMessage{"prompt": json.RawMessage(`"sunset"`)}, bridge.ProgressOf(ctx))
		done <- res{raw, err}
	}()
	select {
	case <-started:
	case <-h.ctx.Done():
		t.Fatal("the server never ran VideoGen")
	}
	if p := <-progress; p.Kind != "accepted" || p.TaskID != "task-77" {
		t.Fatalf("first progress = %+v, want the accepted task", p)
	}
	if err := h.hub.BridgeStatus(h.ctx, "task-77", "log", map[string]any{"status": "running", "content": "50%"}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-progress:
		if p.Kind != "log" || !strings.Contains(string(p.Data), "50%") {
			t.Fatalf("progress = %+v", p)
		}
	case <-h.ctx.Done():
		t.Fatal("no progress")
	}
	select {
	case r := <-done:
		t.Fatalf("the call ended before the final result: %s %v", r.raw, r.err)
	default:
	}
	if err := h.hub.BridgeCallback(h.ctx, "task-77", map[string]any{"taskId": "task-77", "status": "Succeed", "url": "https://example.invalid/v.mp4"}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !strings.Contains(string(r.raw), "v.mp4") {
		t.Fatalf("final = %s, %v; want the late result", r.raw, r.err)
	}
}

func TestServerToolsBridgeOff(t *testing.T) {
	t.Parallel()
	h := bridgeHarness(t, &demohub.Bridge{Disabled: true, Plugins: fakehub.ServerPlugins()}, nil)
	c := h.accept()
	// The request goes out and the server's own handler ignores it.
	if _, err := c.WaitType(h.ctx, wsproto.TypeGetVCPManifests); err != nil {
		t.Fatal(err)
	}
	h.waitServerState(bridge.StateNone)
	st := h.node.Status()
	if st.ServerTools == nil || !strings.Contains(st.ServerTools.Message, "VCPToolBridge plugin is missing or turned off") {
		t.Fatalf("status = %+v, want the plain words", st.ServerTools)
	}
	o := h.node.CallLocal(h.ctx, "r1", "vcp_SciCalculator", nil)
	if o.OK() || !strings.Contains(o.Err, "unknown tool") {
		t.Fatalf("call with no bridge = %+v", o)
	}
}

func TestServerToolCallDropMidCallAndReconnectRefreshes(t *testing.T) {
	t.Parallel()
	reached := make(chan struct{}, 1)
	run := fakehub.ServerRuns(nil)
	b := &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: func(ctx context.Context, tool string, args map[string]json.RawMessage) (any, error) {
		if tool == "SciCalculator" {
			reached <- struct{}{}
			<-ctx.Done() // never answers: the connection drops first
		}
		return run(ctx, tool, args)
	}}
	h := bridgeHarness(t, b, nil)
	c := h.accept()
	h.waitServerState(bridge.StateOffered)
	testwait.Poll(h.ctx, func() bool { return h.hasTool("vcp_SciCalculator") })
	done := make(chan toolhost.Outcome, 1)
	go func() { done <- h.node.CallLocal(h.ctx, "r1", "vcp_SciCalculator", nil) }()
	select {
	case <-reached:
	case <-h.ctx.Done():
		t.Fatal("the call never reached the server")
	}
	// The server loses a plugin while the node is away.
	h.hub.SetBridgePlugins(fakehub.ServerPlugins()[1:])
	c.Drop()
	select {
	case o := <-done:
		if o.OK() || !strings.Contains(o.Err, "dropped while the call ran") {
			t.Fatalf("call cut by the drop = %+v, want the clear error", o)
		}
	case <-h.ctx.Done():
		t.Fatal("the call hung after the connection dropped")
	}
	h.accept()
	if !testwait.Poll(h.ctx, func() bool {
		return h.node.bridge.Status().State == bridge.StateOffered && !h.hasTool("vcp_SciCalculator") && h.hasTool("vcp_VideoGen")
	}) {
		t.Fatalf("the reconnect did not refresh the list: %+v", h.node.ServerTools(h.ctx, false))
	}
}

// A server tool whose name a tool of this machine has never refuses the
// owner's config: the local tool wins, the server's is left out and status
// says so, whether the clash comes with the node's own tools, a reload
// that adds a plugin of that name, or a new list from the server.
func TestServerToolClashNeverRefusesTheOwnersConfig(t *testing.T) {
	t.Parallel()
	plugins := t.TempDir()
	h := startHarness(t, harnessOpt{
		hubOpts: demohub.Options{Bridge: &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(nil)}},
		timings: func(tm *timings) { tm.bridgeListWait = 300 * time.Millisecond },
		tools:   []toolhost.Tool{namedTool{"vcp_VideoGen"}},
	})
	h.accept()
	h.waitServerState(bridge.StateOffered)
	fromServer := func(name string) (local, server bool) {
		for _, ti := range h.node.Tools() {
			if ti.Spec.Name == name {
				return !ti.Spec.FromServer, ti.Spec.FromServer
			}
		}
		return false, false
	}
	warned := func(name string) bool {
		st := h.node.Status().ServerTools
		return st != nil && slices.ContainsFunc(st.Warnings, func(w string) bool {
			return strings.Contains(w, name+" is not offered: this machine has a tool of that name")
		})
	}
	h.waitUntil("the server's SciCalculator registered", func() bool { _, s := fromServer("vcp_SciCalculator"); return s })
	if local, _ := fromServer("vcp_VideoGen"); !local || !warned("vcp_VideoGen") {
		t.Fatalf("vcp_VideoGen: local %v, status %+v; want the local tool and a warning", local, h.node.Status().ServerTools)
	}

	// The owner adds a plugin named as a server tool: the reload is taken.
	writePlugin(t, plugins, "clash", syncManifest("vcp_SciCalculator", "A local calculator."), map[string]string{"answer.sh": answerScript})
	cfg := h.node.Config()
	cfg.Plugins.Dirs, cfg.Plugins.StateDir = []string{plugins}, t.TempDir()
	rep, err := h.node.Reload(cfg)
	if err != nil {
		t.Fatalf("a reload that adds a local vcp_SciCalculator was refused: %v", err)
	}
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "vcp_SciCalculator is not offered") }) {
		t.Errorf("reload warnings = %q, want the server tool left out", rep.Warnings)
	}
	if local, _ := fromServer("vcp_SciCalculator"); !local || !warned("vcp_SciCalculator") {
		t.Fatalf("vcp_SciCalculator after the reload: local %v, status %+v", local, h.node.Status().ServerTools)
	}

	// The server's list changes: the new tool joins, the clashes stay out.
	h.hub.SetBridgePlugins(append(fakehub.ServerPlugins(), demohub.BridgePlugin{Name: "Weather",
		InvocationCommands: []map[string]any{{"command": "now", "description": "The weather now."}}}))
	if got := h.node.ServerTools(h.ctx, true); got.Error != "" {
		t.Fatalf("refresh: %s", got.Error)
	}
	h.waitUntil("the server's new tool registered", func() bool { _, s := fromServer("vcp_Weather"); return s })
	for _, name := range []string{"vcp_VideoGen", "vcp_SciCalculator"} {
		if local, _ := fromServer(name); !local || !warned(name) {
			t.Errorf("%s after the server's change: local %v, status %+v", name, local, h.node.Status().ServerTools)
		}
	}
	o := h.node.CallLocal(h.ctx, "r1", "vcp_SciCalculator", nil)
	if !o.OK() || !strings.Contains(string(o.Result), "answered by clash") {
		t.Fatalf("vcp_SciCalculator = %+v (%s), want the local plugin's answer", o, o.Result)
	}
}
