// Package node connects this machine to a VCP main server as a distributed
// node: it owns the lifecycle, the hub session and reconnect loop, the
// composition of tool sources and reload, and answers the control API as
// control's Backend (api.go). It reaches the WebSocket only through
// hubconn, the liveness core it shares with the observer channels.
package node

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/observer"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// Timings the reconnect loop and session use; tests shorten them.
type timings struct {
	retry                     hubconn.RetryPolicy // waits between attempts (hubconn/backoff.go)
	connsPerMinute, connBurst int                 // connections that reach the server; 0: unlimited
	clock                     hubconn.Clock
	jitter                    func() float64  // uniform in [0, 1); nil: math/rand
	reregister                []time.Duration // re-send register_tools this long after connecting
	closeWait                 time.Duration   // how long to wait for the server's close reply
	emptyHandshakesBeforeHint int
	keyFilePoll               time.Duration // how often a dropped-handshake backoff checks the key file
	readLimit                 int64         // largest frame accepted from the server

	// sessionCallGrace is how long calls of an ended connection may still
	// finish before they are cancelled.
	sessionCallGrace time.Duration

	// killReserve is the part of shutdown_grace kept for the kill step:
	// plugin processes get SIGKILL this long after SIGTERM.
	killReserve time.Duration

	// beforeClose, if set, runs when a session has decided to close and
	// before it stops taking calls: a seam for tests of that window.
	beforeClose func()
	// decodeBudget bounds the bytes of frames read but not yet decoded;
	// a frame that finds no room within busyWait (at most half of what is
	// left of the liveness window) is refused as "node busy".
	// Above readLimit, so that a frame the server may send always fits.
	decodeBudget int64
	busyWait     time.Duration
	// beforeDecode, if set, runs on the decoder goroutine before each frame
	// is decoded: a seam for tests that hold a decode to watch the reader.
	beforeDecode func(frameBytes int)
}

func defaultTimings() timings {
	return timings{
		retry:                     hubconn.DefaultRetryPolicy(),
		connsPerMinute:            hubconn.DefaultConnsPerMinute,
		connBurst:                 hubconn.DefaultConnBurst,
		clock:                     hubconn.RealClock{},
		reregister:                []time.Duration{10 * time.Second, 60 * time.Second},
		closeWait:                 2 * time.Second,
		emptyHandshakesBeforeHint: 3,
		keyFilePoll:               time.Second,
		readLimit:                 config.ServerFrameLimit,
		sessionCallGrace:          5 * time.Second,
		killReserve:               plugin.DefaultKillGrace,
		decodeBudget:              config.ServerFrameLimit + 4*config.MiB,
		busyWait:                  5 * time.Second,
	}
}

// Node is one distributed node. Create it with New, then call Run once.
type Node struct {
	log zerolog.Logger

	mu       sync.Mutex
	cur      *settings  // replaced whole by Reload, never modified
	reloadMu sync.Mutex // one reload at a time
	// baseCfg is the config as given, before the console's tool switches
	// (overrides.go); guarded by reloadMu.
	baseCfg   config.Config
	overrides atomic.Pointer[overridesInForce]

	disp    *toolhost.Dispatcher
	addrs   func() ([]string, error)
	timings timings

	extraTools []toolhost.Tool
	plugins    *pluginRuntime // plugin host, callbacks and outbox (plugins.go)
	mcp        *mcpRuntime    // MCP servers as tools (mcp.go)
	sources    []ToolSource
	getenv     func(string) string
	protected  []string // files never served, whatever the roots

	state     *stateBox
	hurry     chan struct{}
	hurryOnce sync.Once
	reconnect chan struct{}
	// bg holds goroutines that outlive a session (cancelling its calls
	// after the grace); Run waits for them.
	bg      sync.WaitGroup
	ran     atomic.Bool // Run was called
	failure runFailure  // why Run stopped unasked (fatal.go)
	// restart asks the current session to close so the loop reconnects at
	// once: the server cannot update or remove registered tools otherwise.
	restart chan struct{}

	tel *telemetry // status, metrics and audit trail (metrics.go; the audit trail is events.Audit)

	decodeBudget *budget               // frames read, not yet decoded (session_read.go)
	warnings     *toolhost.WarnLimiter // warnings the server can cause at any rate
	// notifier tells systemd about reloads (notify.go); nil does nothing.
	notifier *Notifier

	// ph holds the placeholder store and refresher (placeholders.go).
	ph *placeholderFeed
	// trees is the one process tree Manager of every process starter
	// (proctrees.go), closed at the end of Run.
	trees *lazyTrees
	// sandbox confines every process a call starts (sandbox.go).
	sandbox *sandbox.Sandbox

	events *events.Log   // recent events and subscribers
	obs    *observer.Set // the observer connections
}

// settings is what one config resolves to. Sessions take a snapshot at
// connect, so a reload never changes a running session underneath it.
type settings struct {
	cfg    config.Config
	hubURL *url.URL // carries the key: never log it, use RedactedURL
	key    string   // for the observer URLs: never log it
	name   string

	placeholderJobs []placeholders.Job // placeholders.go
}

// ToolSource adds tools built from the config; it runs at New and on every
// Reload, while the new config is prepared, so it must start nothing: a
// reload it runs for may still be refused. Problems that do not stop the
// other tools are returned as warnings.
type ToolSource func(cfg config.Config, log zerolog.Logger) (tools []toolhost.Tool, warnings []string, err error)

// Option changes how New builds a Node.
type Option func(*Node)

// WithTools adds in-process tools (the demo's examples, tests' fakes).
func WithTools(tools ...toolhost.Tool) Option {
	return func(n *Node) {
		n.extraTools = append(n.extraTools, tools...)
	}
}

// WithToolSource adds a source of tools that is re-run on every reload.
func WithToolSource(src ToolSource) Option {
	return func(n *Node) { n.sources = append(n.sources, src) }
}

// WithProtectedFiles names files the file tool must never serve, even from
// inside a root: the config file, for one. The key file is always protected.
func WithProtectedFiles(paths ...string) Option {
	return func(n *Node) { n.protected = append(n.protected, paths...) }
}

// WithGetenv replaces the environment lookup ($VCPNODE_KEY), so a caller
// such as the demo can keep the process environment out.
func WithGetenv(getenv func(string) string) Option {
	return func(n *Node) { n.getenv = getenv }
}

// WithLocalIPs replaces the address discovery used for report_ip.
func WithLocalIPs(f func() ([]string, error)) Option {
	return func(n *Node) { n.addrs = f }
}

// withTimings is for tests that cannot wait for production intervals.
func withTimings(t timings) Option {
	return func(n *Node) { n.timings = t }
}

// New checks the config, resolves the key and builds the tool registry. It
// does no network I/O.
func New(cfg config.Config, log zerolog.Logger, opts ...Option) (*Node, error) {
	n := &Node{
		log:       log,
		addrs:     localIPs,
		timings:   defaultTimings(),
		state:     newStateBox(),
		hurry:     make(chan struct{}),
		reconnect: make(chan struct{}, 1),
		restart:   make(chan struct{}, 1),
		getenv:    os.Getenv,
	}
	n.trees = &lazyTrees{log: log}
	n.ph = newPlaceholderFeed(log, n.trees)
	n.ph.guard = n.guard
	for _, o := range opts {
		o(n)
	}
	n.decodeBudget = newBudget(n.timings.decodeBudget)
	n.warnings = toolhost.NewWarnLimiter(toolhost.WarnEvery, toolhost.WarnBurst, time.Now)
	n.baseCfg = cfg
	cfg, ov, ovPath := n.withOverrides(cfg)
	n.overrides.Store(&overridesInForce{o: ov, path: ovPath})
	// The sandbox before every host: each confines what it starts with it.
	if err := n.newSandbox(cfg); err != nil { // sandbox.go
		n.trees.close()
		return nil, err
	}
	n.plugins = newPluginRuntime(log, n.getenv, n.trees, n.sandbox)
	n.mcp = newMCPRuntime(log, n.getenv, n.trees, n.sandbox)
	fail := func(err error) (*Node, error) {
		n.plugins.close()
		n.mcp.close()
		n.trees.close() // after every process starter
		return nil, err
	}
	pl, err := n.prepare(cfg)
	if err != nil {
		return fail(err)
	}
	reg, warnings := n.start(pl)
	for _, w := range append(pl.warnings, warnings...) {
		log.Warn().Msg(w)
	}
	n.cur = pl.st
	applyMemoryLimit(cfg.Node.MemoryLimit)
	n.ph.apply(pl.st.placeholderJobs, cfg.Placeholders) // started by Run
	queue := cfg.Node.Queue
	if queue == 0 {
		queue = -1 // toolhost reads 0 as "default"; the config means "no queue"
	}
	n.disp = toolhost.NewDispatcher(reg, cfg.Policy(), toolhost.Limits{
		MaxConcurrent:  cfg.Node.MaxConcurrent,
		Queue:          queue,
		MaxResultBytes: cfg.Node.MaxResultBytes,
	}, log)
	n.initEvents(cfg) // observer_node.go
	if err := n.startTelemetry(cfg); err != nil {
		return fail(err)
	}
	return n, nil
}

// plan is a whole configuration ready to be put in force: the settings,
// the checked tools, the plugin scan and its host, the MCP servers, the
// placeholder jobs. prepare builds it without touching what is in force
// and without starting or stopping a process; commit puts it in force.
type plan struct {
	st *settings
	// tools are the tools that exist without starting anything; the MCP
	// servers' and the direct plugins' tools are added once they run.
	tools    []toolhost.Tool
	servers  []mcp.ServerConfig // the MCP servers
	plugins  *pluginPlan
	warnings []string
}

// prepare validates cfg and builds everything it implies, so that a bad
// config leaves the old one wholly in force. Every check that can refuse
// the config happens here, the registry's included: it is checked with
// the tools the plan will have once its MCP servers and direct plugins
// run. prepare starts and stops no process; commit does.
func (n *Node) prepare(cfg config.Config) (*plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := cfg.Key(n.getenv)
	if err != nil {
		return nil, err
	}
	hubURL, err := config.HubURL(cfg.Hub.URL, key)
	if err != nil {
		return nil, err
	}
	st := &settings{cfg: cfg, hubURL: hubURL, key: key, name: cfg.Hub.Name}
	if st.name == "" {
		st.name, _ = os.Hostname()
	}
	if len(cfg.MCP.Servers) > 0 {
		if err := n.mcp.checkOpen(); err != nil {
			return nil, err
		}
	}
	// The node's own files are never read or written, even inside a root.
	deny := cfg.OwnFiles("", n.getenv, os.Geteuid())
	for _, p := range n.protected {
		if p != "" {
			deny = append(deny, p)
		}
	}
	pp, err := n.plugins.prepare(cfg)
	if err != nil {
		return nil, err
	}
	pl := &plan{st: st, plugins: pp}
	fail := func(err error) (*plan, error) {
		n.plugins.discard(pp)
		return nil, err
	}
	extra := slices.Clone(n.extraTools)
	for _, src := range n.sources {
		more, warn, err := src(cfg, n.log)
		if err != nil {
			return fail(err)
		}
		extra = append(extra, more...)
		pl.warnings = append(pl.warnings, warn...)
	}
	var static []*plugin.StaticPlugin
	if pp.set != nil {
		static = pp.set.Static
	}
	jobs, warn, err := n.placeholderJobs(cfg, static)
	if err != nil {
		return fail(fmt.Errorf("placeholders: %w", err))
	}
	st.placeholderJobs = jobs
	pl.warnings = append(append(pp.warnings, pl.warnings...), warn...)
	ts, err := BuildToolSet(cfg, pp.set, deny, extra)
	if err != nil {
		return fail(err)
	}
	pl.tools, pl.servers = ts.Tools, ts.Servers
	return pl, nil
}

// commit puts pl in force: the processes (MCP servers and direct plugins
// started, restarted and stopped), the plugin host and scan; then calls
// see the new tools and the new policy together (one swap in the
// dispatcher). Nothing here refuses the plan; what goes wrong is returned
// as warnings.
func (n *Node) commit(pl *plan) (warnings []string) {
	reg, warnings := n.start(pl)
	n.disp.Swap(reg, pl.st.cfg.Policy())
	n.mu.Lock()
	n.cur = pl.st
	n.mu.Unlock()
	return warnings
}

// start runs what pl needs running and returns the registry of its tools.
// New calls it before the dispatcher exists; later, commit.
func (n *Node) start(pl *plan) (*toolhost.Registry, []string) {
	// MCP first: it may wait for new servers to list their tools, and the
	// plugin scan, once published, should not wait long for its registry.
	mcpTools, warnings := n.mcp.apply(pl.st.cfg, pl.servers)
	directTools, warn := n.plugins.commit(pl.plugins)
	warnings = append(warnings, warn...)
	reg := toolhost.NewRegistry()
	if err := reg.Replace(append(append(slices.Clone(pl.tools), mcpTools...), directTools...)); err != nil {
		// prepare checked every name these tools can have; should one
		// still clash, the tools that exist without processes stay usable.
		warnings = append(warnings, fmt.Sprintf("register tools: %v; MCP servers and direct plugins are not offered until the next reload", err))
		_ = reg.Replace(pl.tools)
	}
	return reg, warnings
}

func (n *Node) settings() *settings {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur
}

// Hurry cuts the shutdown grace period short: in-flight calls are cancelled
// now instead of being given time to finish. Safe to call more than once.
func (n *Node) Hurry() {
	n.hurryOnce.Do(func() { close(n.hurry) })
}

// Reconnect cuts a backoff wait short.
func (n *Node) Reconnect() {
	select {
	case n.reconnect <- struct{}{}:
	default:
	}
}

// State returns a snapshot of the connection and a channel closed at the next change.
func (n *Node) State() (ConnState, <-chan struct{}) { return n.state.get() }

// Tools lists every registered tool with its exposure, timeout and limit.
func (n *Node) Tools() []toolhost.ToolInfo { return n.disp.Tools() }

// InFlight lists the calls accepted and not yet answered.
func (n *Node) InFlight() []toolhost.InFlightCall { return n.disp.InFlight() }

// HubURL is the hub address with the key redacted, for display.
func (n *Node) HubURL() string { return config.RedactedURL(n.settings().hubURL) }

// Name is the serverName the node registers with.
func (n *Node) Name() string { return n.settings().name }

// Config is the config in force.
func (n *Node) Config() config.Config { return n.settings().cfg }

// Run keeps the node connected until ctx is cancelled, then shuts down
// gracefully: new calls are refused, in-flight calls get the configured
// grace period (cut short by Hurry) to finish while their results are still
// sent, and the connection is closed with a close frame.
//
// It returns nil after a stop asked through ctx, whatever its cause (a
// signal, a deadline). A stop it was not asked for returns its cause: a
// second Run (a Node runs once), or a fatal failure, a panic in one of its
// goroutines (fatal.go), after the same graceful shutdown. The connect loop
// never gives up (a bad key looks like a server restart), and every other
// component failure is logged and retried.
func (n *Node) Run(ctx context.Context) error {
	if !n.ran.CompareAndSwap(false, true) {
		return errRunTwice
	}
	ctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	n.failure.mu.Lock()
	n.failure.stop = stopRun
	n.failure.mu.Unlock()
	drained := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(drained)
		defer n.recoverFatal("shutdown")
		<-ctx.Done()
		// Refusing first: whoever sees "stopping" sees new calls refused.
		n.disp.StopAccepting()
		n.state.update(func(s *ConnState) { s.Phase = PhaseStopping })
		grace := n.settings().cfg.Node.ShutdownGrace.D()
		finish := finishWithin(grace, n.timings.killReserve)
		n.log.Info().Dur("grace", grace).Dur("calls_may_run", finish).
			Msg("shutting down: refusing new calls, waiting for in-flight ones")
		graceCtx, cancel := context.WithTimeout(context.Background(), finish)
		defer cancel()
		go func() {
			select {
			case <-n.hurry:
				n.log.Warn().Msg("second signal: cancelling in-flight calls now")
				cancel()
			case <-graceCtx.Done():
			}
		}()
		if err := n.disp.Shutdown(graceCtx); err != nil {
			n.log.Warn().Err(err).Msg("in-flight calls were cancelled at the end of the grace period")
		}
	}()
	stopPlugins := n.startPlugins(ctx)
	stopMCP := n.startMCP(ctx)
	stopPlaceholders := n.ph.start()
	waitObservers := n.runObservers(ctx)
	approvalsDone := make(chan struct{})
	go func() {
		defer close(approvalsDone)
		n.guard("approval events", func() { n.publishLocalApprovals(ctx) })
	}()
	n.guard("connect loop", func() { n.connectLoop(ctx, drained) })
	waitObservers()
	<-approvalsDone
	wg.Wait()
	n.bg.Wait()
	stopPlaceholders()
	stopPlugins() // after the drain: in-flight plugin calls were given their grace
	stopMCP()
	n.trees.close() // every process starter has stopped
	n.state.update(func(s *ConnState) { s.Phase = PhaseStopped })
	if err := n.failed(); err != nil {
		n.log.Error().Err(err).Msg("stopped after a fatal failure")
		return err
	}
	n.log.Info().Msg("stopped")
	return nil
}

// finishWithin is how long in-flight calls may run at shutdown so that
// stopping them still fits in grace: cancelling a plugin call sends SIGTERM
// and SIGKILL only kill later, so that step is reserved at the end. A grace
// too short for both is split in half.
func finishWithin(grace, kill time.Duration) time.Duration {
	if grace >= 2*kill {
		return grace - kill
	}
	return grace / 2
}

// errRunTwice: Run was called on a Node that already ran.
var errRunTwice = errors.New("node: Run called more than once; make a new Node")
