package node

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"runtime/debug"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/observer"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolsource"
	"github.com/vcpnode/vcpnode/toolsource/builtins"
	"github.com/vcpnode/vcpnode/toolsource/mcpservers"
	"github.com/vcpnode/vcpnode/toolsource/plugins"
	"github.com/vcpnode/vcpnode/wsproto"
)

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
	rules     ruleStore // the owner's remembered answers (approval_rules.go)

	disp    *toolhost.Dispatcher
	addrs   func() ([]string, error)
	timings timings

	extraTools []toolhost.Tool
	plugins    *plugins.Source    // the plugin folders, one of sources (plugins.go)
	mcp        *mcpservers.Source // MCP servers as tools, one of sources
	// changed wakes the follower when a source's tools changed, and
	// follow says what to do (mcp.go).
	changed chan struct{}
	follow  followWork
	// inForce is the plan last committed; guarded by reloadMu.
	inForce *plan
	// bridge reaches the server's own tools (bridge.go); nil in observer mode.
	bridge    *bridge.Client
	sources   []toolsource.Source // toolsource.go
	getenv    func(string) string
	protected []string // files never served, whatever the roots
	onRefusal func(kind, tool string, refused []sandbox.Refusal)

	// hub keeps the node connected to the server: the reconnect loop, the
	// session, the connection state (hub.go is what it asks of the node).
	hub       *hubsession.Engine
	version   string // sent to the server (machine.go)
	gpuOnce   sync.Once
	gpuList   []wsproto.GPU
	authWay   hubconn.Remembered // the way the key was taken last ([hub] auth)
	hurry     chan struct{}
	hurryOnce sync.Once
	ran       atomic.Bool // Run was called
	failure   runFailure  // why Run stopped unasked (fatal.go)
	// mode is config.Config.Mode at New: a reload does not change it.
	mode string

	tel *telemetry // status, metrics and audit trail (metrics.go; the audit trail is events.Audit)

	// notifier tells the service manager about reloads; nil: none.
	notifier ReloadNotifier

	// ph holds the placeholder store and refresher; phSources are the
	// WithPlaceholderSource sources it is made with.
	ph        *feed.Feed
	phSources []feed.Source
	// trees is the one process tree Manager of every process starter,
	// closed at the end of Run.
	trees *proctree.Lazy
	// sandbox confines every process a call starts (sandbox.go).
	sandbox *sandbox.Sandbox

	events *events.Log   // recent events and subscribers
	obs    *observer.Set // the observer connections
}

// settings is what one config resolves to. Sessions take a snapshot at
// connect, so a reload never changes a running session underneath it.
type settings struct {
	// Settings hold the config, and the hub's URL (with the key: never
	// log it, use config.RedactedURL), key and name it resolves to, as the
	// hub session reads them.
	hubsession.Settings

	placeholderJobs []placeholders.Job // feed.Feed.Jobs
}

// Option changes how New builds a Node.
type Option func(*Node)

// ReloadNotifier is told when a reload begins and ends (systemd's
// RELOADING=1 and READY=1; sdnotify.Notifier).
type ReloadNotifier interface {
	Reloading() error
	Ready(status string) error
}

// WithNotifier makes the node tell the service manager about reloads. The
// daemon sends READY and STOPPING itself.
func WithNotifier(nt ReloadNotifier) Option {
	return func(n *Node) { n.notifier = nt }
}

// WithTools adds in-process tools (the demo's examples, tests' fakes).
func WithTools(tools ...toolhost.Tool) Option {
	return func(n *Node) {
		n.extraTools = append(n.extraTools, tools...)
	}
}

// WithPlaceholderSource adds a source of placeholder jobs re-run on every reload.
func WithPlaceholderSource(src feed.Source) Option {
	return func(n *Node) { n.phSources = append(n.phSources, src) }
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

// WithSessionTimings replaces the hub session's waits and limits
// (hubsession.DefaultTimings): for tests outside this package that run a
// node at test speed.
func WithSessionTimings(t hubsession.Timings) Option {
	return func(n *Node) { n.timings.Timings = t }
}

// WithServerListWait bounds the wait for the server's tool list (zero:
// bridge.DefaultListWait): for tests of a server that never answers.
func WithServerListWait(d time.Duration) Option {
	return func(n *Node) { n.timings.bridgeListWait = d }
}

// New checks the config, resolves the key and builds the tool registry. It
// does no network I/O.
func New(cfg config.Config, log zerolog.Logger, opts ...Option) (*Node, error) {
	n := &Node{
		log:     log,
		addrs:   localIPs,
		timings: defaultTimings(),
		hurry:   make(chan struct{}),
		changed: make(chan struct{}, 1),
		getenv:  os.Getenv,
	}
	n.trees = proctree.NewLazy(log)
	for _, o := range opts {
		o(n)
	}
	n.mode = cfg.Mode()
	// The sources every node has, after those of WithToolSource: the file
	// tool and the built-ins, the MCP servers, the plugin folders (below,
	// once the sandbox exists); the server's own tools go first (bridge.go).
	n.mcp = mcpservers.New()
	n.sources = append(n.sources, builtins.New(), n.mcp)
	n.baseCfg = cfg
	cfg, ov, ovPath := n.withOverrides(cfg)
	n.overrides.Store(&overridesInForce{o: ov, path: ovPath})
	// The sandbox before every host: each confines what it starts with it.
	if err := n.newSandbox(cfg); err != nil { // sandbox.go
		n.trees.Close()
		return nil, err
	}
	n.ph = feed.New(feed.Options{Log: log, Trees: n.trees.Get, Sandbox: n.sandbox, Guard: n.guard, Sources: n.phSources})
	n.plugins = plugins.New(plugins.Options{Log: log, Getenv: n.getenv, Trees: n.trees.Get, Sandbox: n.sandbox, Audit: n.auditRecord})
	n.sources = append(n.sources, n.plugins)
	n.newBridge()                          // bridge.go
	var serverTools hubsession.ServerTools // none in observer mode
	if n.bridge != nil {
		serverTools = n.bridge
	}
	// [hub] auth = "auto" keeps the way that worked for the next start.
	n.authWay.File = n.hubAuthFile(cfg) // hub.go
	n.authWay.OnSaveError = func(err error) {
		log.Warn().Err(err).Msg("the way the server took the key is not remembered for the next start")
	}
	n.hub = hubsession.New(hubHost{n}, hubsession.Options{
		Log: log, Register: cfg.Node.Register, Timings: n.timings.Timings, Auth: &n.authWay,
		Feed: n.ph, OutboxReady: n.plugins.OutboxReady(), Bridge: serverTools,
	})
	fail := func(err error) (*Node, error) {
		n.closeSources()
		n.trees.Close() // after every process starter
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
	n.ph.Apply(pl.st.placeholderJobs, cfg.Placeholders) // started by Run
	queue := cfg.Node.Queue
	if queue == 0 {
		queue = -1 // toolhost reads 0 as "default"; the config means "no queue"
	}
	n.disp = toolhost.NewDispatcher(reg, toolconfig.Policy(cfg), toolhost.Limits{
		MaxConcurrent:  cfg.Node.MaxConcurrent,
		Queue:          queue,
		MaxResultBytes: cfg.Node.MaxResultBytes,
	}, log)
	// A call of an MCP server's tool before it listed: "not running".
	n.disp.SetMissing(n.mcp.Missing)
	n.loadApprovalRules(n.baseCfg) // approval_rules.go
	n.initEvents(cfg)              // observers.go
	if err := n.startTelemetry(cfg); err != nil {
		return fail(err)
	}
	return n, nil
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
func (n *Node) Reconnect() { n.hub.Reconnect() }

// State returns a snapshot of the connection and a channel closed at the next change.
func (n *Node) State() (ConnState, <-chan struct{}) { return n.hub.State() }

// Tools lists every registered tool with its exposure, timeout and limit.
func (n *Node) Tools() []toolhost.ToolInfo { return n.disp.Tools() }

// InFlight lists the calls accepted and not yet answered.
func (n *Node) InFlight() []toolhost.InFlightCall { return n.disp.InFlight() }

// HubURL is the hub address with the key redacted, for display.
func (n *Node) HubURL() string { return config.RedactedURL(n.settings().HubURL) }

// Name is the serverName the node registers with.
func (n *Node) Name() string { return n.settings().Name }

// Config is the config in force.
func (n *Node) Config() config.Config { return n.settings().Config }

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
		n.hub.SetPhase(PhaseStopping)
		grace := n.settings().Config.Node.ShutdownGrace.D()
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
	stopFollow := n.startFollow(ctx) // mcp.go
	stopPlaceholders := n.ph.Start()
	waitObservers := n.runObservers(ctx)
	approvalsDone := make(chan struct{})
	go func() {
		defer close(approvalsDone)
		n.guard("approval events", func() { n.publishLocalApprovals(ctx) })
	}()
	if n.mode != config.ModeObserver {
		n.guard("connect loop", func() { n.hub.Run(ctx, drained) })
	} else {
		// Observer mode: no node connection, only the observer channels.
		n.log.Info().Msg("observer mode: no distributed session; only the observer channels")
		<-ctx.Done()
	}
	waitObservers()
	<-approvalsDone
	wg.Wait()
	n.hub.Wait()
	stopPlaceholders()
	stopPlugins() // after the drain: in-flight plugin calls were given their grace
	stopFollow()
	n.closeSources() // MCP servers, the bridge's client and the rest
	n.trees.Close()  // every process starter has stopped
	n.hub.SetPhase(PhaseStopped)
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

// The soft memory limit is process-wide. The value in force before the
// first config set one (GOMEMLIMIT, or none) is kept so that a reload that
// removes node.memory_limit puts it back.
var (
	memLimitMu      sync.Mutex
	memLimitInitial int64 = -1
)

// applyMemoryLimit sets the runtime's soft memory limit from the config.
func applyMemoryLimit(limit int64) {
	memLimitMu.Lock()
	defer memLimitMu.Unlock()
	if memLimitInitial < 0 {
		memLimitInitial = debug.SetMemoryLimit(-1) // a negative value only reads it
	}
	if limit <= 0 {
		limit = memLimitInitial
	}
	debug.SetMemoryLimit(limit)
}
