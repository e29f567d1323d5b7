package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// testKey looks like a real key so that a leak into logs would be found.
const testKey = fakehub.TestKey

// harness is a node running against a fake hub on loopback.
type harness struct {
	t    *testing.T
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
	t.Retry = hubconn.RetryPolicy{Steps: []time.Duration{10 * time.Millisecond}, Floor: 10 * time.Millisecond, Ceiling: 50 * time.Millisecond, Patience: time.Hour, Max: 50 * time.Millisecond}
	t.ConnsPerMinute = 0
	t.Reregister = nil
	t.CloseWait = 2 * time.Second
	return t
}

type harnessOpt struct {
	hubOpts demohub.Options
	config  func(*config.Config)
	timings func(*timings)
	tools   []toolhost.Tool
	// patience bounds every wait in the test (h.ctx); 0 means 30 s.
	patience time.Duration
	// redactLog passes the log through config.Redact, as vcpnode run's log
	// writer does: for tests where the server names the key itself (in a
	// tool name it calls), which the node logs as it is.
	redactLog bool
}

// andConfig returns o with f applied after o's own config function.
func (o harnessOpt) andConfig(f func(*config.Config)) harnessOpt {
	base := o.config
	o.config = func(c *config.Config) {
		if base != nil {
			base(c)
		}
		f(c)
	}
	return o
}

func startHarness(t *testing.T, o harnessOpt) *harness {
	t.Helper()
	patience := o.patience
	if patience == 0 {
		patience = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)

	// The loop guard is off; its own tests switch it on.
	hub, cfg := fakehub.StartForNode(t, o.hubOpts)
	if o.config != nil {
		o.config(&cfg)
	}
	tm := testTimings()
	if o.timings != nil {
		o.timings(&tm)
	}
	logs := &testlog.Buffer{}
	if o.redactLog {
		logs.Redact = config.Redact
	}
	log := zerolog.New(logs).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	tools := append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, o.tools...)
	n, err := New(cfg, log, WithTools(tools...), withTimings(tm), WithGetenv(noEnv(t)),
		WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	runCtx, stop := context.WithCancelCause(context.Background())
	h := &harness{t: t, hub: hub, node: n, logs: logs, ctx: ctx, cfg: cfg, stopWith: stop, stopped: make(chan error, 1)}
	go func() { h.stopped <- n.Run(runCtx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node log (last 8 KiB):\n%s", tail(logs.String(), 8<<10))
		}
		if err := h.shutdown(); err != nil {
			t.Errorf("Run = %v, want nil after a plain cancel", err)
		}
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("the key appears in the node's log:\n%s", logs.String())
		}
	})
	return h
}

// shutdown cancels Run and waits for it; safe to call twice.
func (h *harness) shutdown() error {
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

func (h *harness) accept() *demohub.Conn {
	h.t.Helper()
	c, err := h.hub.Accept(h.ctx)
	if err != nil {
		h.t.Fatalf("accept: %v", err)
	}
	return c
}

func (h *harness) call(c *demohub.Conn, tool string, args map[string]any) wsproto.ToolResult {
	h.t.Helper()
	res, err := c.Call(h.ctx, tool, args)
	if err != nil {
		h.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// waitState polls the node's state (by change notification) until ok holds.
func (h *harness) waitState(what string, ok func(ConnState) bool) ConnState {
	h.t.Helper()
	for {
		s, changed := h.node.State()
		if ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-h.ctx.Done():
			h.t.Fatalf("timed out waiting for %s; state %+v", what, s)
		}
	}
}

// waitLog waits until the log holds substr. Logs have no change channel, so
// this polls with a deadline.
func (h *harness) waitLog(substr string) {
	h.t.Helper()
	if !testwait.Poll(h.ctx, func() bool { return strings.Contains(h.logs.String(), substr) }) {
		h.t.Fatalf("log never said %q:\n%s", substr, h.logs.String())
	}
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

// noEnv is the environment of a node under test: nothing of the
// developer's ($VCPNODE_KEY, $STATE_DIRECTORY, credentials) but a state
// directory of the test's own, which as root would be /var/lib/vcpnode.
func noEnv(t testing.TB) func(string) string {
	stateDir := t.TempDir()
	return func(name string) string {
		if name == "STATE_DIRECTORY" {
			return stateDir
		}
		return ""
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func (h *harness) acceptObserver(channel string) *demohub.ObserverConn {
	h.t.Helper()
	o, err := h.hub.AcceptObserver(h.ctx, channel)
	if err != nil {
		h.t.Fatalf("accept observer %s: %v", channel, err)
	}
	return o
}
