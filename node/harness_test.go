package node

import (
	"context"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/hubtest"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// testKey looks like a real key so that a leak into logs would be found.
const testKey = fakehub.TestKey

// harness is a node running against a fake hub on loopback (a
// hubtest.Rig, whose fields it names as node's tests do).
type harness struct {
	t    *testing.T
	rig  *hubtest.Rig
	hub  *demohub.Hub
	node *Node
	logs *testlog.Buffer
	ctx  context.Context // bounds every wait in the test
	cfg  config.Config   // the config the node started with

	stopWith context.CancelCauseFunc
	stopped  chan error
}

func (h *harness) stop() { h.stopWith(nil) }

// testTimings are production behaviour at test speed.
func testTimings() timings {
	t := defaultTimings()
	t.Retry = hubtest.FastRetry()
	t.ConnsPerMinute = 0
	t.Reregister = nil
	return t
}

type harnessOpt struct {
	hubOpts demohub.Options
	config  func(*config.Config)
	timings func(*timings)
	tools   []toolhost.Tool
	// patience bounds each wait of the rig's own (hubtest.Rig.Wait);
	// h.ctx bounds the test as a whole. 0 means 30 s.
	patience time.Duration
	// redactLog passes the log through config.Redact, as vcpnode run's log
	// writer does: for tests where the server names the key itself (in a
	// tool name it calls), which the node logs as it is.
	redactLog bool
}

// andConfig returns o with f applied after o's own config function.
func (o harnessOpt) andConfig(f func(*config.Config)) harnessOpt {
	o.config = hubtest.ThenConfig(o.config, f)
	return o
}

func startHarness(t *testing.T, o harnessOpt) *harness {
	t.Helper()
	ro := hubtest.Options{Hub: o.hubOpts, Config: o.config, Patience: o.patience}
	if o.redactLog {
		ro.Redact = config.Redact
	}
	// The loop guard is off; its own tests switch it on.
	rig := hubtest.Start(t, ro)
	tm := testTimings()
	if o.timings != nil {
		o.timings(&tm)
	}
	tools := append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, o.tools...)
	n, err := New(rig.Config, rig.Log, WithTools(tools...), withTimings(tm), WithGetenv(noEnv(t)),
		WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rig.Run("Run", n.Run)
	return &harness{t: t, rig: rig, hub: rig.Hub, node: n, logs: rig.Logs, ctx: rig.Ctx, cfg: rig.Config, stopWith: rig.Stop, stopped: rig.Stopped}
}

// shutdown cancels Run and waits for it; safe to call twice.
func (h *harness) shutdown() error {
	h.t.Helper()
	return h.rig.Shutdown()
}

func (h *harness) accept() *demohub.Conn {
	h.t.Helper()
	return h.rig.Accept()
}

func (h *harness) call(c *demohub.Conn, tool string, args map[string]any) wsproto.ToolResult {
	h.t.Helper()
	return h.rig.Call(c, tool, args)
}

// waitState waits (by change notification) until the node's state satisfies ok.
func (h *harness) waitState(what string, ok func(ConnState) bool) ConnState {
	h.t.Helper()
	return testwait.Change(h.ctx, h.t, what, h.node.State, ok)
}

// waitLog waits until the log holds substr.
func (h *harness) waitLog(substr string) {
	h.t.Helper()
	h.rig.WaitLog(substr)
}

func firstText(t *testing.T, res wsproto.ToolResult) string {
	t.Helper()
	return testtool.FirstText(t, res)
}

// gateTool blocks every call until released or cancelled, and reports both.
type gateTool = testtool.Gate

func newGateTool() *gateTool { return testtool.NewGate() }

func (h *harness) waitStarted(g *gateTool, want string) {
	h.t.Helper()
	g.WaitStarted(h.ctx, h.t, want)
}

// hourRetries makes every wait about an hour, for tests that cut it short.
func hourRetries() hubconn.RetryPolicy {
	return hubconn.RetryPolicy{Steps: []time.Duration{time.Hour}, Floor: time.Hour, Ceiling: time.Hour, Max: time.Hour}
}

// noEnv is fakehub.NoEnv, by the name node's tests use.
var noEnv = fakehub.NoEnv

func (h *harness) acceptObserver(channel string) *demohub.ObserverConn {
	h.t.Helper()
	return h.rig.AcceptObserver(channel)
}
