package hubsession

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/hubtest"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

// testKey looks like a real key so that a leak into logs would be found.
const testKey = fakehub.TestKey

// fakeHost is the node as the engine sees it, made of the real pieces the
// node composes (a dispatcher, an outbox, the config's key and URL) and
// nothing else: no plugins, no observers, no reload but Rescan's.
type fakeHost struct {
	log  zerolog.Logger
	disp *toolhost.Dispatcher
	box  *outbox.Box

	mu  sync.Mutex
	cfg config.Config
	st  *Settings

	// fatal holds the first panic a Guard caught, as the node's fatal stop.
	fatalMu sync.Mutex
	fatal   error
	stop    context.CancelCauseFunc
}

func newFakeHost(t *testing.T, cfg config.Config, log zerolog.Logger, tools []toolhost.Tool, ready chan struct{}) *fakeHost {
	t.Helper()
	reg := toolhost.NewRegistry()
	fileOpts := files.Options{Roots: cfg.Files.Roots, MaxBytes: cfg.Files.MaxBytes}
	if err := reg.Replace(append([]toolhost.Tool{files.NewTool(fileOpts)}, tools...)); err != nil {
		t.Fatalf("registry: %v", err)
	}
	queue := cfg.Node.Queue
	if queue == 0 {
		queue = -1 // toolhost reads 0 as "default"; the config means "no queue"
	}
	disp := toolhost.NewDispatcher(reg, toolconfig.Policy(cfg), toolhost.Limits{
		MaxConcurrent: cfg.Node.MaxConcurrent, Queue: queue, MaxResultBytes: cfg.Node.MaxResultBytes,
	}, log)
	box, err := outbox.Open(t.TempDir(), ready, log)
	if err != nil {
		t.Fatalf("outbox: %v", err)
	}
	t.Cleanup(box.Close)
	h := &fakeHost{log: log, disp: disp, box: box, cfg: cfg}
	if err := h.Rescan(); err != nil {
		t.Fatalf("settings: %v", err)
	}
	return h
}

func (h *fakeHost) Settings() *Settings {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.st
}

func (h *fakeHost) Dispatch(ctx context.Context, _ *Settings, wire string, call toolhost.Call, reply func(toolhost.Outcome)) bool {
	return h.disp.Dispatch(ctx, wire, call, reply)
}

func (h *fakeHost) Cancel(requestID string) bool { return h.disp.Cancel(requestID) }

func (h *fakeHost) EndOrigin(o *toolhost.Origin, cause error) int {
	dropped, _ := h.disp.EndOrigin(o, cause)
	return dropped
}

func (h *fakeHost) Manifests(*Settings) ([]json.RawMessage, error) { return h.disp.Manifests() }

func (h *fakeHost) Capabilities(st *Settings) wsproto.Capabilities {
	return wsproto.Capabilities{CancelTool: true, Labels: st.Config.Node.Labels}
}

func (h *fakeHost) LocalIPs() ([]string, error) { return []string{"192.0.2.10"}, nil }

func (h *fakeHost) Connected(context.Context, *Settings) {}

func (h *fakeHost) Outbox() *outbox.Box { return h.box }

// Rescan reads the key again (hub.key_file) and makes new settings, as the
// node's reload does for the hub.
func (h *fakeHost) Rescan() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var sum [32]byte
	if h.cfg.Hub.KeyFile != "" {
		sum = FileSum(h.cfg.Hub.KeyFile)
	}
	key, err := h.cfg.Key(func(string) string { return "" })
	if err != nil {
		return err
	}
	u, err := config.HubURL(h.cfg.Hub.URL, key)
	if err != nil {
		return err
	}
	h.st = &Settings{Config: h.cfg, HubURL: u, Key: key, KeyFileSum: sum, Name: h.cfg.Hub.Name}
	return nil
}

// Guard turns a panic into a stop of the harness's run, as the node's does.
func (h *fakeHost) Guard(what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("%s panicked: %v", what, r)
			h.log.Error().Err(err).Str("stack", string(debug.Stack())).Msg("fatal")
			h.fatalMu.Lock()
			if h.fatal == nil {
				h.fatal = err
			}
			stop := h.stop
			h.fatalMu.Unlock()
			if stop != nil {
				stop(err)
			}
		}
	}()
	f()
}

// harness is an engine running against a fake hub on loopback (a
// hubtest.Rig, whose fields it names as the engine's tests do).
type harness struct {
	t      *testing.T
	rig    *hubtest.Rig
	hub    *demohub.Hub
	engine *Engine
	host   *fakeHost
	feed   *feed.Feed // the placeholder values pushed on each connection
	logs   *testlog.Buffer
	ctx    context.Context // bounds every wait in the test
	cfg    config.Config   // the config the engine started with
}

func (h *harness) stop() { h.rig.Stop(nil) }

// testTimings are production behaviour at test speed.
func testTimings() Timings {
	t := DefaultTimings()
	t.Retry = hubtest.FastRetry()
	t.ConnsPerMinute = 0
	t.Reregister = nil
	return t
}

type harnessOpt struct {
	hubOpts demohub.Options
	config  func(*config.Config)
	timings func(*Timings)
	tools   []toolhost.Tool
	// patience bounds each wait of the rig's own (hubtest.Rig.Wait);
	// h.ctx bounds the test as a whole. 0 means 30 s.
	patience time.Duration
	// bridge takes the server's tool frames; nil: none.
	bridge ServerTools
}

// andConfig returns o with f applied after o's own config function.
func (o harnessOpt) andConfig(f func(*config.Config)) harnessOpt {
	o.config = hubtest.ThenConfig(o.config, f)
	return o
}

func startHarness(t *testing.T, o harnessOpt) *harness {
	t.Helper()
	rig := hubtest.Start(t, hubtest.Options{Hub: o.hubOpts, Config: o.config, Patience: o.patience})
	cfg := rig.Config
	tm := testTimings()
	if o.timings != nil {
		o.timings(&tm)
	}
	tools := append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, o.tools...)
	ready := make(chan struct{}, 1)
	host := newFakeHost(t, cfg, rig.Log, tools, ready)
	ph := feed.New(feed.Options{Log: rig.Log})
	ph.Apply(nil, cfg.Placeholders)
	e := New(host, Options{Log: rig.Log, Register: cfg.Node.Register, Timings: tm, Feed: ph, OutboxReady: ready, Bridge: o.bridge})

	host.stop = rig.Stop
	h := &harness{t: t, rig: rig, hub: rig.Hub, engine: e, host: host, feed: ph, logs: rig.Logs, ctx: rig.Ctx, cfg: cfg}
	rig.Run("run", h.run)
	return h
}

// run is the node's Run as far as the engine sees it: connected until ctx
// ends, then calls refused, in-flight ones given the shutdown grace, and
// the session closed once they are answered.
func (h *harness) run(ctx context.Context) error {
	drained := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(drained)
		<-ctx.Done()
		h.host.disp.StopAccepting()
		h.engine.SetPhase("stopping")
		grace, cancel := context.WithTimeout(context.Background(), h.cfg.Node.ShutdownGrace.D())
		defer cancel()
		_ = h.host.disp.Shutdown(grace)
	}()
	h.host.Guard("connect loop", func() { h.engine.Run(ctx, drained) })
	wg.Wait()
	h.engine.Wait()
	h.engine.SetPhase("stopped")
	h.host.fatalMu.Lock()
	defer h.host.fatalMu.Unlock()
	return h.host.fatal
}

// shutdown cancels the run and waits for it; safe to call twice.
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

// waitState waits (by change notification) until the state satisfies ok.
func (h *harness) waitState(what string, ok func(connState) bool) connState {
	h.t.Helper()
	return testwait.Change(h.ctx, h.t, what, h.engine.State, ok)
}

// waitLog waits until the log holds substr.
func (h *harness) waitLog(substr string) {
	h.t.Helper()
	h.rig.WaitLog(substr)
}

// waitInFlight polls until the dispatcher holds n calls.
func (h *harness) waitInFlight(n int) {
	h.t.Helper()
	if !testwait.Poll(h.ctx, func() bool { return len(h.host.disp.InFlight()) == n }) {
		h.t.Fatalf("in-flight calls = %v, want %d", h.host.disp.InFlight(), n)
	}
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

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func firstText(t *testing.T, res wsproto.ToolResult) string {
	t.Helper()
	return testtool.FirstText(t, res)
}
