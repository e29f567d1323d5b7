// Package hubtest runs a client of the hub under test (the hub session
// engine, a whole node, observer channels) against a fake hub of its own: the client's config
// and log, a deadline of its own for every wait, and at the end the checks every such
// test makes (a clean stop, the key in no log line). Only _test files
// import it (internal/archtest checks).
package hubtest

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
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Rig is what a test runs a client of the hub with (the hub session
// engine, a whole node, observer channels): a hub of its own that takes
// fakehub.TestKey, the client's config (fakehub.StartForNode's), the log
// sink the client writes to and a context that bounds the test as a whole;
// each wait of the Rig's own has its own deadline (Wait). When the test ends it stops the client, and fails the test if the
// client's run did not end cleanly or the key reached its log.
type Rig struct {
	Hub    *demohub.Hub
	Config config.Config
	Logs   *testlog.Buffer
	Log    zerolog.Logger // writes to Logs, at debug level
	// Ctx bounds the test as a whole (testwait.Long): it ends before the
	// test binary's -timeout, not after one budget shared by every wait.
	// A wait of its own takes Wait.
	Ctx context.Context

	// Stop ends the client's run with a cause (nil: a plain stop);
	// Stopped then receives what the run returned, and is closed once
	// Shutdown has read it.
	Stop    context.CancelCauseFunc
	Stopped chan error

	t        testing.TB
	runCtx   context.Context
	patience time.Duration
}

// Options change a Rig.
type Options struct {
	Hub demohub.Options
	// Config changes the client's config after fakehub.StartForNode's.
	Config func(*config.Config)
	// Patience bounds each wait of the test (Rig.Wait) on its own: a
	// test of many waits does not spend one budget; 0 means 30 s.
	Patience time.Duration
	// Redact rewrites every log write, as vcpnode run's log writer does
	// with config.Redact: for tests where the server names the key itself.
	Redact func(string) string
}

// Start starts the hub and makes the client's config and log; the test
// then builds its client and calls Run.
func Start(t testing.TB, o Options) *Rig {
	t.Helper()
	patience := o.Patience
	if patience == 0 {
		patience = 30 * time.Second
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		ctx, cancel = testwait.Long(d)
	} else {
		ctx, cancel = context.WithTimeout(context.Background(), testwait.LongDefault)
	}
	t.Cleanup(cancel)
	hub, cfg := fakehub.StartForNode(t, o.Hub)
	if o.Config != nil {
		o.Config(&cfg)
	}
	logs := &testlog.Buffer{Redact: o.Redact}
	log := zerolog.New(logs).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	runCtx, stop := context.WithCancelCause(context.Background())
	r := &Rig{Hub: hub, Config: cfg, Logs: logs, Log: log, Ctx: ctx, Stop: stop, Stopped: make(chan error, 1), t: t, runCtx: runCtx, patience: patience}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), fakehub.TestKey) {
			t.Errorf("the key appears in the log:\n%s", logs.String())
		}
	})
	return r
}

// Run runs the client (run, named what in a failure) until the test ends
// or Stop; at the end it wants run to have returned nil.
func (r *Rig) Run(what string, run func(ctx context.Context) error) {
	go func() { r.Stopped <- run(r.runCtx) }()
	r.t.Cleanup(func() {
		if r.t.Failed() {
			s := r.Logs.String()
			r.t.Logf("log (last 8 KiB):\n%s", s[max(0, len(s)-8<<10):])
		}
		if err := r.Shutdown(); err != nil {
			r.t.Errorf("%s = %v, want nil after a plain stop", what, err)
		}
	})
}

// Shutdown stops the client and waits for its run to return; safe to call
// twice.
func (r *Rig) Shutdown() error {
	r.t.Helper()
	r.Stop(nil)
	select {
	case err, ok := <-r.Stopped:
		if ok {
			close(r.Stopped)
		}
		return err
	case <-time.After(20 * time.Second):
		r.t.Fatalf("the client did not stop after shutdown")
		return nil
	}
}

// Wait is a context for one wait: it ends after the Rig's patience from
// now, or with Ctx.
func (r *Rig) Wait() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Ctx, r.patience)
}

// Accept waits for the client's next connection to the hub.
func (r *Rig) Accept() *demohub.Conn {
	r.t.Helper()
	ctx, cancel := r.Wait()
	defer cancel()
	c, err := r.Hub.Accept(ctx)
	if err != nil {
		r.t.Fatalf("accept: %v", err)
	}
	return c
}

// AcceptObserver waits for the client's next connection to an observer
// channel of the hub.
func (r *Rig) AcceptObserver(channel string) *demohub.ObserverConn {
	r.t.Helper()
	ctx, cancel := r.Wait()
	defer cancel()
	o, err := r.Hub.AcceptObserver(ctx, channel)
	if err != nil {
		r.t.Fatalf("accept observer %s: %v", channel, err)
	}
	return o
}

// Call calls tool through c as the server does and returns its result.
func (r *Rig) Call(c *demohub.Conn, tool string, args map[string]any) wsproto.ToolResult {
	r.t.Helper()
	ctx, cancel := r.Wait()
	defer cancel()
	res, err := c.Call(ctx, tool, args)
	if err != nil {
		r.t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// WaitLog waits until the log holds substr. The log has no change
// channel: this polls, for the Rig's patience.
func (r *Rig) WaitLog(substr string) {
	r.t.Helper()
	ctx, cancel := r.Wait()
	defer cancel()
	if !testwait.Poll(ctx, func() bool { return strings.Contains(r.Logs.String(), substr) }) {
		r.t.Fatalf("log never said %q:\n%s", substr, r.Logs.String())
	}
}

// ThenConfig is the config change first (when set) followed by next: for
// a test that adds to a harness's own change.
func ThenConfig(first, next func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		if first != nil {
			first(c)
		}
		next(c)
	}
}

// FastRetry is a client's reconnect schedule at test speed: every wait
// between 10 and 50 ms, and never giving up.
func FastRetry() hubconn.RetryPolicy {
	return hubconn.RetryPolicy{Steps: []time.Duration{10 * time.Millisecond}, Floor: 10 * time.Millisecond,
		Ceiling: 50 * time.Millisecond, Patience: time.Hour, Max: 50 * time.Millisecond}
}
