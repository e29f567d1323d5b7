// Package nodetest runs a whole node for the tests of the packages it
// composes (the console's pages, the observer channels beside a node
// session): a node on a state directory of the test's own against a fake
// hub on loopback, its control socket, console and metrics listeners, and
// waits with deadlines. It builds on node's exported API only; node's own
// tests keep their harness, which reaches inside. Only _test files import
// it (internal/archtest checks).
package nodetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Options change the node a Harness runs.
type Options struct {
	// Hub is the fake hub's behaviour (its Key is always fakehub.TestKey).
	Hub demohub.Options
	// Config changes the node's config after fakehub.StartForNode's.
	Config func(*config.Config)
	// Session changes SessionTimings before the node gets them.
	Session func(*hubsession.Timings)
	// ServerListWait bounds the wait for the server's tool list (zero: the
	// bridge's default).
	ServerListWait time.Duration
	// Tools are added to Echo and SystemInfo.
	Tools []toolhost.Tool
	// Patience bounds every wait of the test (Harness.Ctx); 0 means 30 s.
	Patience time.Duration
}

// Harness is a node running against a fake hub on loopback until the test
// ends; it fails the test if the key reaches the node's log.
type Harness struct {
	t      *testing.T
	Hub    *demohub.Hub
	Node   *node.Node
	Logs   *testlog.Buffer
	Log    zerolog.Logger  // the node's, for the servers a test starts beside it
	Ctx    context.Context // bounds every wait of the test
	Config config.Config   // the config the node started with

	stop    context.CancelFunc
	stopped chan error
}

// SessionTimings are the hub session's production behaviour at test speed:
// retries within 50 ms, no connection rate limit, no re-registration.
func SessionTimings() hubsession.Timings {
	t := hubsession.DefaultTimings()
	t.Retry = hubconn.RetryPolicy{Steps: []time.Duration{10 * time.Millisecond}, Floor: 10 * time.Millisecond, Ceiling: 50 * time.Millisecond, Patience: time.Hour, Max: 50 * time.Millisecond}
	t.ConnsPerMinute = 0
	t.Reregister = nil
	t.CloseWait = 2 * time.Second
	return t
}

// Start runs a node named "test-node" with Echo and Gate exposed (see
// fakehub.StartForNode) and o's changes. The node sees no environment
// but a state directory of the test's own, and stops when the test ends.
func Start(t *testing.T, o Options) *Harness {
	t.Helper()
	patience := o.Patience
	if patience == 0 {
		patience = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)

	hub, cfg := fakehub.StartForNode(t, o.Hub)
	if o.Config != nil {
		o.Config(&cfg)
	}
	tm := SessionTimings()
	if o.Session != nil {
		o.Session(&tm)
	}
	logs := &testlog.Buffer{}
	log := zerolog.New(logs).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	tools := append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, o.Tools...)
	n, err := node.New(cfg, log, node.WithTools(tools...), node.WithSessionTimings(tm), node.WithServerListWait(o.ServerListWait),
		node.WithGetenv(NoEnv(t)), node.WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }))
	if err != nil {
		t.Fatalf("node.New: %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	h := &Harness{t: t, Hub: hub, Node: n, Logs: logs, Log: log, Ctx: ctx, Config: cfg, stop: stop, stopped: make(chan error, 1)}
	go func() { h.stopped <- n.Run(runCtx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node log (last 8 KiB):\n%s", tail(logs.String(), 8<<10))
		}
		if err := h.Shutdown(); err != nil {
			t.Errorf("Run = %v, want nil after a plain cancel", err)
		}
		if strings.Contains(logs.String(), fakehub.TestKey) {
			t.Errorf("the key appears in the node's log:\n%s", logs.String())
		}
	})
	return h
}

// Shutdown stops the node and waits for Run to return its error; safe to
// call twice.
func (h *Harness) Shutdown() error {
	h.t.Helper()
	h.stop()
	select {
	case err, ok := <-h.stopped:
		if ok {
			close(h.stopped)
		}
		return err
	case <-time.After(20 * time.Second):
		h.t.Fatalf("Run did not return after shutdown")
		return nil
	}
}

// NoEnv is the environment of a node under test: nothing of the
// developer's ($VCPNODE_KEY, $STATE_DIRECTORY, credentials) but a state
// directory of the test's own, which as root would be /var/lib/vcpnode.
func NoEnv(t testing.TB) func(string) string {
	stateDir := t.TempDir()
	return func(name string) string {
		if name == "STATE_DIRECTORY" {
			return stateDir
		}
		return ""
	}
}

// Accept waits for the node's next connection to the hub.
func (h *Harness) Accept() *demohub.Conn {
	h.t.Helper()
	c, err := h.Hub.Accept(h.Ctx)
	if err != nil {
		h.t.Fatalf("accept: %v", err)
	}
	return c
}

// Call calls tool through c as the server does and returns its result.
func (h *Harness) Call(c *demohub.Conn, tool string, args map[string]any) wsproto.ToolResult {
	h.t.Helper()
	res, err := c.Call(h.Ctx, tool, args)
	if err != nil {
		h.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// AsyncCall sends an execute_tool with id from the hub and delivers its
// result later; args' values are sent as JSON strings, as the server does.
func (h *Harness) AsyncCall(c *demohub.Conn, id, tool string, args map[string]string) <-chan wsproto.ToolResult {
	out := make(chan wsproto.ToolResult, 1)
	call := wsproto.ExecuteTool{RequestID: id, ToolName: tool, ToolArgs: map[string]json.RawMessage{}}
	for k, v := range args {
		raw, _ := json.Marshal(v) // a string always marshals
		call.ToolArgs[k] = raw
	}
	go func() {
		res, err := c.CallExecute(h.Ctx, call)
		if err != nil {
			res = wsproto.ToolResult{RequestID: id, Status: "test-error", Error: err.Error()}
		}
		out <- res
	}()
	return out
}

// WaitResult waits for the result of an AsyncCall.
func (h *Harness) WaitResult(ch <-chan wsproto.ToolResult) wsproto.ToolResult {
	h.t.Helper()
	select {
	case res := <-ch:
		return res
	case <-h.Ctx.Done():
		h.t.Fatal("no tool_result")
		return wsproto.ToolResult{}
	}
}

// Registered waits for c's next register_tools: the names, sorted, and
// each manifest by name.
func (h *Harness) Registered(c *demohub.Conn) (names []string, manifests map[string]map[string]any) {
	h.t.Helper()
	names, manifests, err := fakehub.Registered(h.Ctx, c)
	if err != nil {
		h.t.Fatal(err)
	}
	return names, manifests
}

// WaitGone waits for the node to drop c (a reload that changed the tools).
func (h *Harness) WaitGone(c *demohub.Conn) {
	h.t.Helper()
	select {
	case <-c.Done():
	case <-h.Ctx.Done():
		h.t.Fatal("the node kept its connection")
	}
}

// WaitState waits (by change notification) until the node's connection
// state satisfies ok.
func (h *Harness) WaitState(what string, ok func(node.ConnState) bool) node.ConnState {
	h.t.Helper()
	for {
		s, changed := h.Node.State()
		if ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-h.Ctx.Done():
			h.t.Fatalf("timed out waiting for %s; state %+v", what, s)
		}
	}
}

// WaitPending waits until the node holds n calls for approval.
func (h *Harness) WaitPending(n int) []toolhost.PendingApproval {
	h.t.Helper()
	for {
		changed := h.Node.Approvals().Changes()
		if p := h.Node.Approvals().Pending(); len(p) == n {
			return p
		}
		select {
		case <-changed:
		case <-h.Ctx.Done():
			h.t.Fatalf("never %d pending approvals", n)
		}
	}
}

// WaitServerState waits until the server's tools reach want. The bridge
// has no change channel: this polls with the test's deadline.
func (h *Harness) WaitServerState(want bridge.State) {
	h.t.Helper()
	if !testwait.Poll(h.Ctx, func() bool { return h.Node.ServerTools(h.Ctx, false).State == string(want) }) {
		h.t.Fatalf("server tools never reached %q: %+v", want, h.Node.ServerTools(h.Ctx, false))
	}
}

// WaitLog waits until the node's log holds substr. The log has no change
// channel: this polls with the test's deadline.
func (h *Harness) WaitLog(substr string) {
	h.t.Helper()
	if !testwait.Poll(h.Ctx, func() bool { return strings.Contains(h.Logs.String(), substr) }) {
		h.t.Fatalf("log never said %q:\n%s", substr, h.Logs.String())
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }
