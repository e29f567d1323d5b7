// Package node connects this machine to a VCP main server as a distributed
// node: it owns the config, the hub session, the reconnect loop and the
// dispatch of calls to toolhost. It is the only package that touches the
// WebSocket and backoff libraries.
package node

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Timings the reconnect loop and session use; tests shorten them.
type timings struct {
	backoffInitial            time.Duration
	backoffMax                time.Duration
	stableAfter               time.Duration   // a session up this long resets the backoff
	reregister                []time.Duration // re-send register_tools this long after connecting
	closeWait                 time.Duration   // how long to wait for the server's close reply
	emptyHandshakesBeforeHint int
	readLimit                 int64 // largest frame accepted from the server
}

func defaultTimings() timings {
	return timings{
		backoffInitial:            500 * time.Millisecond,
		backoffMax:                30 * time.Second,
		stableAfter:               30 * time.Second,
		reregister:                []time.Duration{10 * time.Second, 60 * time.Second},
		closeWait:                 2 * time.Second,
		emptyHandshakesBeforeHint: 3,
		readLimit:                 ServerFrameLimit,
	}
}

// Node is one distributed node. Create it with New, then call Run once.
type Node struct {
	cfg    Config
	log    zerolog.Logger
	key    string // never logged, never put in an error
	hubURL *url.URL
	name   string

	registry *toolhost.Registry
	disp     *toolhost.Dispatcher
	addrs    func() ([]string, error)
	timings  timings

	extraTools []toolhost.Tool
	protected  []string // files never served, whatever the roots

	state     *stateBox
	hurry     chan struct{}
	hurryOnce sync.Once
	reconnect chan struct{}
}

// Option changes how New builds a Node.
type Option func(*Node)

// WithTools adds in-process tools (the demo's examples, tests' fakes).
func WithTools(tools ...toolhost.Tool) Option {
	return func(n *Node) {
		n.extraTools = append(n.extraTools, tools...)
	}
}

// WithProtectedFiles names files the file tool must never serve, even from
// inside a root: the config file, for one. The key file is always protected.
func WithProtectedFiles(paths ...string) Option {
	return func(n *Node) { n.protected = append(n.protected, paths...) }
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
func New(cfg Config, log zerolog.Logger, opts ...Option) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := cfg.Key(os.Getenv)
	if err != nil {
		return nil, err
	}
	hubURL, err := HubURL(cfg.Hub.URL, key)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:       cfg,
		log:       log,
		key:       key,
		hubURL:    hubURL,
		name:      cfg.Hub.Name,
		registry:  toolhost.NewRegistry(),
		addrs:     localIPs,
		timings:   defaultTimings(),
		state:     newStateBox(),
		hurry:     make(chan struct{}),
		reconnect: make(chan struct{}, 1),
	}
	if n.name == "" {
		n.name, _ = os.Hostname()
	}
	for _, o := range opts {
		o(n)
	}
	// The node's own secrets are never served, even from inside a root.
	var deny []string
	for _, p := range append([]string{cfg.Hub.KeyFile}, n.protected...) {
		if p != "" {
			deny = append(deny, p)
		}
	}
	tools := append([]toolhost.Tool{
		toolhost.NewFileTool(toolhost.FileOptions{Roots: cfg.Files.Roots, MaxBytes: cfg.Files.MaxBytes, Deny: deny}),
	}, n.extraTools...)
	for _, t := range tools {
		if err := n.registry.Add(t); err != nil {
			return nil, fmt.Errorf("register tool: %w", err)
		}
	}
	queue := cfg.Node.Queue
	if queue == 0 {
		queue = -1 // toolhost reads 0 as "default"; the config means "no queue"
	}
	n.disp = toolhost.NewDispatcher(n.registry, cfg.Policy(), toolhost.Limits{
		MaxConcurrent:  cfg.Node.MaxConcurrent,
		Queue:          queue,
		MaxResultBytes: cfg.Node.MaxResultBytes,
	}, log)
	return n, nil
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

// Tools lists the registered tools and, for each, whether it is exposed and why.
func (n *Node) Tools() []toolhost.Tool { return n.registry.List() }

// HubURL is the hub address with the key redacted, for display.
func (n *Node) HubURL() string { return RedactedURL(n.hubURL) }

// Run keeps the node connected until ctx is cancelled, then shuts down
// gracefully: new calls are refused, in-flight calls get the configured
// grace period (cut short by Hurry) to finish while their results are still
// sent, and the connection is closed with a close frame. It returns nil after
// a graceful shutdown.
func (n *Node) Run(ctx context.Context) error {
	drained := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(drained)
		<-ctx.Done()
		n.state.update(func(s *ConnState) { s.Phase = PhaseStopping })
		n.log.Info().Dur("grace", n.cfg.Node.ShutdownGrace.D()).Msg("shutting down: refusing new calls, waiting for in-flight ones")
		graceCtx, cancel := context.WithTimeout(context.Background(), n.cfg.Node.ShutdownGrace.D())
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
	n.connectLoop(ctx, drained)
	wg.Wait()
	n.state.update(func(s *ConnState) { s.Phase = PhaseStopped })
	n.log.Info().Msg("stopped")
	return nil
}
