// Package plugin hosts VCP plugin folders unchanged: it discovers and
// validates plugin-manifest.json files, builds each plugin's environment, and
// runs synchronous, asynchronous and static stdio plugins as child processes,
// each run a process tree of its own (package proctree) that is stopped
// whole, whatever its processes do to their session or group. The plugin
// format is VCPToolBox's (its Plugin.js).
//
// It imports toolhost and nothing of the node: the node registers Set.Tools
// with its toolhost.Registry, hands Set.Static to the placeholder refresher,
// and calls Host.Close at shutdown.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/inflight"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// CloseWait is how long a host's owner gives Close to stop its processes
// (at shutdown, or when a one-shot host is done): Close fits KillGrace
// into it, so only a process the kernel cannot reap outlasts it.
const CloseWait = 10 * time.Second

// Defaults for zero Options fields.
const (
	DefaultMaxOutputBytes  = 16 << 20
	DefaultKillGrace       = 2 * time.Second
	DefaultAsyncMaxRuntime = 30 * time.Minute
	// maxStderrBytes is how much of a run's stderr is kept for error messages.
	maxStderrBytes = 64 << 10
	// stderrTailBytes is how much of the end of a longer stderr is kept:
	// the last lines are part of a failure's summary.
	stderrTailBytes = 8 << 10
	// exitDrain is how long output is still read after a plugin's main
	// process exits, for descendants that inherited its stdout: the official
	// hosts answer at exit, so such a descendant must not hold the call.
	exitDrain = 200 * time.Millisecond
)

// Options configure a Host. Zero fields take the defaults.
type Options struct {
	// PassEnv names daemon environment variables every plugin also gets,
	// on top of the base set (PATH, HOME, LANG, LC_*, TZ, TMPDIR, USER…).
	PassEnv []string
	// EnvFile is an optional dotenv file every plugin gets (VCP's global
	// config.env); a missing or unreadable file fails Scan.
	EnvFile string
	// MaxOutputBytes caps a run's captured stdout; the rest is read and discarded.
	MaxOutputBytes int
	// KillGrace is the time between SIGTERM and SIGKILL to a plugin's
	// process tree. At Close it is shortened to fit the deadline of Close's
	// context, so a caller with a fixed shutdown budget can pass it whole.
	KillGrace time.Duration
	// AsyncMaxRuntime bounds an asynchronous plugin's process after it has answered.
	AsyncMaxRuntime time.Duration
	// CallbackBaseURL is given to asynchronous plugins as CALLBACK_BASE_URL
	// when Callbacks is nil; empty leaves whatever the env files say.
	CallbackBaseURL string
	// Callbacks, when set, gives each run of an asynchronous plugin a
	// CALLBACK_BASE_URL of its own (CallbackServer.Grant), revoked once
	// every process of the run has ended.
	Callbacks *CallbackServer
	// Pins, when set, keep each plugin folder's first-seen name whatever
	// its manifest says later (see Pins).
	Pins *Pins
	// Environ returns the daemon environment the base set and PassEnv are
	// taken from; nil means os.Environ.
	Environ func() []string
	// ProcessTrees tracks every process a run starts (a cgroup per run, or
	// a walk of its descendants; see package proctree). Nil: the host makes
	// its own, in the best mode the system allows, and closes it in Close.
	ProcessTrees *proctree.Manager
	// Sandbox confines every run under its plugin's profile; nil runs
	// plugins unconfined.
	Sandbox *sandbox.Sandbox
	// Log receives run and kill events; environment values are never logged.
	Log zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.AsyncMaxRuntime <= 0 {
		o.AsyncMaxRuntime = DefaultAsyncMaxRuntime
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	return o
}

// Errors callers may branch on.
var (
	// ErrClosed: the Host was closed; nothing new is started and running plugins are stopped.
	ErrClosed = errors.New("plugin host is closed")
	// ErrFailed: the plugin exited unsuccessfully without a JSON answer.
	ErrFailed = errors.New("failed")
	// ErrMaxRuntime: an asynchronous plugin outlived Options.AsyncMaxRuntime.
	ErrMaxRuntime = errors.New("ran longer than the asynchronous plugin limit")
	// ErrRunEnded: a synchronous or static run answered and its leader
	// exited; what it left running is stopped.
	ErrRunEnded = errors.New("the run ended; its leftover processes are stopped")
	// ErrUnsupportedPlatform: stdio plugins need process trees (Unix or Windows).
	ErrUnsupportedPlatform = errors.New("running stdio plugins needs a Unix or Windows system")
)

// Host runs plugin processes and owns every one it started: Close stops
// them all, including asynchronous plugins still working after they answered.
type Host struct {
	opts Options
	log  zerolog.Logger

	trees     *proctree.Manager // nil: plugins cannot run here
	ownTrees  bool              // made by NewHost, closed by Close
	closeKill atomic.Int64      // the kill grace fitted to Close's deadline (ns), 0: none

	// ctx is cancelled by Close; every run watches it.
	ctx    context.Context
	cancel context.CancelCauseFunc

	procs inflight.Counter // processes started and not yet fully reaped

	kills   atomic.Uint64
	started atomic.Uint64

	warmCalls atomic.Uint64
	warmMu    sync.Mutex
	pools     map[*runSpec]*pool // by the spec of the scan in force (Warm)

	bootOnce sync.Once // writes the node bootstrap (nodeBootstrapFile)
	boot     string    // its path
	bootDir  string    // its directory, removed by Close
	bootErr  error
}

// NewHost returns a Host with opts (zero fields take the defaults).
func NewHost(opts Options) *Host {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancelCause(context.Background())
	h := &Host{
		opts:   opts,
		log:    opts.Log,
		ctx:    ctx,
		cancel: cancel,
		trees:  opts.ProcessTrees,
	}
	if h.trees == nil {
		trees, err := proctree.New(proctree.Options{Log: opts.Log})
		if err != nil {
			h.log.Warn().Err(err).Msg("plugin processes cannot be tracked here; stdio plugins will not run")
		} else {
			h.trees, h.ownTrees = trees, true
		}
	}
	return h
}

// TreeMode is how plugin process trees are tracked ("cgroup",
// "subreaper", "process-group"), or "none" when plugins cannot run.
func (h *Host) TreeMode() string {
	if h.trees == nil {
		return "none"
	}
	return h.trees.Mode().String()
}

// killGrace is the SIGTERM→SIGKILL wait for a stop with cause.
func (h *Host) killGrace(cause error) time.Duration {
	g := h.opts.KillGrace
	if c := time.Duration(h.closeKill.Load()); c > 0 && errors.Is(cause, ErrClosed) {
		g = min(g, c)
	}
	return g
}

// Kills is how many plugin process groups the host has stopped itself
// (timeouts, cancels, the asynchronous cap, shutdown), for metrics.
func (h *Host) Kills() uint64 { return h.kills.Load() }

// Started is how many plugin processes the host has started, for metrics.
func (h *Host) Started() uint64 { return h.started.Load() }

// Running is how many plugin processes are running or not yet reaped.
func (h *Host) Running() int { return h.procs.Count() }

// Close stops every plugin process tree (SIGTERM, SIGKILL after KillGrace)
// and waits until all are reaped or ctx ends. When ctx has a deadline the
// grace is shortened so SIGKILL goes out with a quarter of the time left
// (at most a second) for the kernel: the whole stop fits the deadline.
// Later runs fail with ErrClosed. It is safe to call more than once.
func (h *Host) Close(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		h.closeKill.Store(int64(max(time.Millisecond, left-min(left/4, time.Second))))
	}
	defer func() {
		if h.ownTrees {
			h.trees.Close()
		}
		h.bootOnce.Do(func() {}) // none is written after Close
		if h.bootDir != "" {
			_ = os.RemoveAll(h.bootDir) // the processes loaded it when they started
		}
	}()
	drained, _ := h.procs.Close()
	h.cancel(ErrClosed)
	if drained == nil {
		return nil
	}
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plugin processes still running at shutdown (%d): %w", h.Running(), context.Cause(ctx))
	}
}

// track counts a process about to start; it fails once the host is closed.
func (h *Host) track() error {
	if !h.procs.Begin() {
		return ErrClosed
	}
	return nil
}

// untrack is called once per tracked process, after it was reaped and its
// pipes were closed.
func (h *Host) untrack() { h.procs.End() }

// runContext is ctx that also ends when the host is closed. stop releases it.
func (h *Host) runContext(ctx context.Context) (context.Context, func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(h.ctx, func() { cancel(ErrClosed) })
	return rctx, func() {
		unhook()
		cancel(context.Canceled)
	}
}
