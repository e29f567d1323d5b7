package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// State is where a server is in its life.
type State string

// The states a server goes through.
const (
	StateStarting   State = "starting"   // connecting and listing tools
	StateRunning    State = "running"    // connected; calls go through
	StateRestarting State = "restarting" // down, waiting to try again
	StateStopped    State = "stopped"    // removed or the host closed
)

// server supervises one configured MCP server: it connects, lists the
// tools, follows list changes, and reconnects with backoff when the
// session ends, for as long as its context lives.
type server struct {
	cfg    ServerConfig
	o      Options
	log    zerolog.Logger
	client *sdk.Client
	relist chan struct{} // notifications/tools/list_changed
	cancel context.CancelFunc
	done   chan struct{}
	first  chan struct{} // closed when the first attempt finished, either way
	once   sync.Once

	mu       sync.Mutex
	state    State
	since    time.Time
	live     *session // nil unless running
	ending   *session // the session being torn down, until its reason is known
	lastErr  string   // why the server is not running
	restarts int
	attempt  int       // failed attempts in a row, for status
	retryAt  time.Time // when the next attempt starts, while restarting
	set      *toolSet  // the last listing; nil before the first
	ran      bool      // a session came up once: a package runner has its package
	budget   string    // a start's longer budget and why, for status; "" for the usual one
}

// session is one connection to the server, with what ended it.
type session struct {
	cs   *sdk.ClientSession
	proc *proc // nil for HTTP
	// calls is cancelled when the session ends: calls in flight send MCP
	// cancellation and return (the SDK's Close waits for them otherwise).
	calls     context.Context
	stopCalls context.CancelFunc
	ended     chan struct{}
	reason    string // why it ended; set before ended is closed
}

func newServer(cfg ServerConfig, o Options) *server {
	s := &server{
		cfg:    cfg,
		o:      o,
		log:    o.Log.With().Str("mcp_server", cfg.Name).Logger(),
		relist: make(chan struct{}, 1),
		done:   make(chan struct{}),
		first:  make(chan struct{}),
		state:  StateStarting,
		since:  time.Now(),
	}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "vcpnode", Version: o.Version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case s.relist <- struct{}{}:
			default:
			}
		},
	})
	return s
}

func (s *server) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	go s.run(ctx)
}

// stop ends the server and waits for it, or for ctx.
func (s *server) stop(ctx context.Context) error {
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("MCP server %s did not stop: %w", s.cfg.Name, ctx.Err())
	}
}

func (s *server) run(ctx context.Context) {
	defer close(s.done)
	defer s.firstDone()
	attempt := 0
	for {
		live, err := s.connect(ctx)
		if ctx.Err() != nil {
			if live != nil {
				// Stopped just as it came up: its process must not be left running.
				s.mu.Lock()
				s.live = nil
				s.mu.Unlock()
				s.end(live)
			}
			s.setState(StateStopped, "")
			return
		}
		var why string
		if err != nil {
			attempt++
			s.log.Warn().Err(err).Int("attempt", attempt).Msg("MCP server could not be started")
			why = err.Error()
		} else {
			up := time.Now()
			s.serve(ctx, live)
			if ctx.Err() != nil {
				s.setState(StateStopped, "")
				return
			}
			if time.Since(up) >= stableAfter {
				attempt = 0
			}
			attempt++
			s.log.Warn().Str("reason", live.reason).Int("attempt", attempt).Msg("MCP server stopped; restarting it")
			why = live.reason
		}
		// Published at once: whoever sees the server restarting sees why,
		// the attempt and the restart counted, and when the next one is.
		wait := s.o.Backoff(attempt)
		s.mu.Lock()
		s.setStateLocked(StateRestarting, why)
		s.restarts++
		s.attempt, s.retryAt = attempt, time.Now().Add(wait)
		s.mu.Unlock()
		s.firstDone() // a first attempt that failed is over too
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.setState(StateStopped, "")
			return
		case <-t.C:
		}
		s.setState(StateStarting, "")
	}
}

func (s *server) firstDone() { s.once.Do(func() { close(s.first) }) }

// connect starts (stdio) or reaches (HTTP, SSE) the server, initializes a
// session and lists its tools, all within InitTimeout.
func (s *server) connect(ctx context.Context) (*session, error) {
	budget, why := s.initBudget()
	note := ""
	if why != "" {
		note = "up to " + humantext.Duration(budget) + why
		s.log.Info().Dur("budget", budget).Msg("MCP server: a first start through a package runner, given longer to start" + why)
	}
	s.mu.Lock()
	s.budget = note
	s.mu.Unlock()
	ictx, cancel := context.WithTimeoutCause(ctx, budget,
		fmt.Errorf("no answer to initialize and tools/list within %s%s", humantext.Duration(budget), why))
	defer cancel()
	live := &session{ended: make(chan struct{})}
	live.calls, live.stopCalls = context.WithCancel(context.Background())
	var t sdk.Transport
	if s.cfg.URL != "" {
		h, err := headers(s.o, s.cfg)
		if err != nil {
			return nil, err
		}
		client := &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: h}}
		if s.cfg.SSE {
			t = sessionLong{&sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}, live.calls, live.stopCalls}
		} else {
			t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}
		}
	} else {
		p, err := startProc(s.o, s.cfg, s.o.ProcessTrees, s.log)
		if err != nil {
			return nil, err
		}
		live.proc = p
		t = &sdk.IOTransport{Reader: p.out, Writer: p.stdin, MaxLineLength: -1}
	}
	fail := func(err error) (*session, error) {
		if cause := context.Cause(ictx); ictx.Err() != nil && ctx.Err() == nil {
			err = cause
		} else if live.proc != nil {
			// The server closed the connection: it is most likely exiting,
			// and its exit status and last words say why.
			t := time.NewTimer(drainWait)
			select {
			case <-live.proc.exited:
			case <-t.C:
			}
			t.Stop()
		}
		why := s.describe(live, err)
		s.end(live)
		return nil, errors.New(why)
	}
	cs, err := s.client.Connect(ictx, t, nil)
	if err != nil {
		return fail(err)
	}
	live.cs = cs
	set, err := s.list(ictx, cs)
	if err != nil {
		return fail(fmt.Errorf("tools/list: %w", err))
	}
	s.mu.Lock()
	old := s.set
	// The list with the state: running never shows the last session's tools.
	s.state, s.since, s.live, s.lastErr, s.set = StateRunning, time.Now(), live, "", set
	s.attempt, s.ran = 0, true
	s.mu.Unlock()
	s.log.Info().Int("tools", set.tools).Msg("MCP server running")
	s.announce(old, set)
	s.firstDone()
	return live, nil
}

// initBudget is how long this start may take to initialize and list its
// tools, and what the timeout's error adds to say why it is that long: a
// server started through a package runner that has not run yet gets
// FetchTimeout, since `npx -y` first downloads the package (a large one on
// a slow line or a loaded machine takes minutes; killed at InitTimeout
// it would be restarted for ever). Once it ran, the package is in the
// runner's cache.
func (s *server) initBudget() (time.Duration, string) {
	runner := ""
	if s.cfg.URL == "" {
		runner = sandbox.PackageRunner(append([]string{s.cfg.Command}, s.cfg.Args...))
	}
	s.mu.Lock()
	ran := s.ran
	s.mu.Unlock()
	if runner == "" || ran {
		return s.o.InitTimeout, ""
	}
	return s.o.FetchTimeout, fmt.Sprintf(" (a first start through %s, which may be downloading the package)", runner)
}

// sessionLong connects a transport whose connection lives as long as the
// context given to Connect (the SSE client's event stream does): it gets
// the session's context instead, cut when connect's own context ends
// before Connect returns, so a stalled connect still gives up in time.
type sessionLong struct {
	sdk.Transport
	session context.Context
	cancel  context.CancelFunc
}

func (t sessionLong) Connect(ctx context.Context) (sdk.Connection, error) {
	stop := context.AfterFunc(ctx, t.cancel)
	defer stop()
	return t.Transport.Connect(t.session)
}

// serve waits for the session to end, relisting on list_changed.
func (s *server) serve(ctx context.Context, live *session) {
	ended := make(chan error, 1)
	go func() { ended <- live.cs.Wait() }()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case err = <-ended:
			break loop
		case <-s.relist:
			lctx, cancel := context.WithTimeout(ctx, s.o.InitTimeout)
			set, lerr := s.list(lctx, live.cs)
			cancel()
			if lerr != nil {
				s.log.Warn().Err(lerr).Msg("MCP server announced a new tool list that could not be read")
				continue
			}
			s.update(set)
		}
	}
	s.mu.Lock()
	s.live, s.ending = nil, live
	s.mu.Unlock()
	s.end(live)
	live.reason = s.describe(live, err)
	s.mu.Lock()
	s.ending, s.lastErr = nil, live.reason // the state is run's to change, with the restart counted
	s.mu.Unlock()
	close(live.ended)
}

// end closes a session: calls in flight are cancelled, the SDK session
// closed, and a stdio server's process stopped (its group killed at last).
func (s *server) end(live *session) {
	live.stopCalls()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		if live.cs != nil {
			live.cs.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*stopGrace)
	defer cancel()
	if live.proc != nil {
		live.proc.stop(ctx)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		s.log.Warn().Msg("MCP session did not close in time; left to finish in the background")
	}
}

// describe says why a session failed or ended, preferring what the server
// itself said on stderr.
func (s *server) describe(live *session, err error) string {
	var parts []string
	if live.proc != nil {
		if ferr := live.proc.out.failure(); ferr != nil {
			parts = append(parts, ferr.Error())
		}
		if r := live.proc.exitReason(); r != "" {
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 && err != nil {
		parts = append(parts, clip(err.Error(), stderrKeep))
	}
	if len(parts) == 0 {
		parts = append(parts, "connection closed")
	}
	msg := parts[0]
	for _, p := range parts[1:] {
		msg += ", " + p
	}
	if live.proc != nil {
		if line := live.proc.stderr(); line != "" {
			msg += ": " + line
		}
		if live.proc.exitReason() != "" {
			// Ended by itself: name the profile, and a limit it reached or
			// what the sandbox refused.
			msg = live.proc.sb.Explain(errors.New(msg), live.proc.stderrHeadBytes()).Error()
		}
	}
	return msg
}

// explain names the sandbox profile in the error of a failed call, and
// what the sandbox refused (EACCES in the server's answer).
func (l *session) explain(err error) error {
	if err == nil || l.proc == nil {
		return err
	}
	return l.proc.sb.Explain(err)
}

func (s *server) setState(st State, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setStateLocked(st, why)
}

func (s *server) setStateLocked(st State, why string) {
	if s.state != st {
		s.state, s.since = st, time.Now()
	}
	if st != StateRestarting {
		s.retryAt = time.Time{}
	}
	if why != "" {
		s.lastErr = why
	}
}

// list reads every page of tools/list and builds the VCP tool from it.
func (s *server) list(ctx context.Context, cs *sdk.ClientSession) (*toolSet, error) {
	var tools []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if page > 1000 {
			return nil, errors.New("more than 1000 pages of tools")
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	return buildToolSet(s.cfg, cs.InitializeResult(), tools), nil
}

// update installs a new listing and tells the node when the VCP tool changed.
func (s *server) update(set *toolSet) {
	s.mu.Lock()
	old := s.set
	s.set = set
	s.mu.Unlock()
	s.announce(old, set)
}

// announce logs a tool list that replaced old and tells the host, unless
// it is the same list.
func (s *server) announce(old, set *toolSet) {
	if old != nil && old.key == set.key {
		return
	}
	for _, w := range set.warnings {
		s.log.Warn().Msg(w)
	}
	s.log.Info().Int("tools", set.tools).Bool("first", old == nil).Msg("MCP server tool list read")
	s.o.OnChange(s.cfg.Name)
}

// current is the running session, or why there is none.
func (s *server) current() (*session, error) {
	s.mu.Lock()
	live, ending := s.live, s.ending
	s.mu.Unlock()
	if live != nil {
		return live, nil
	}
	if ending != nil {
		// It just went down: wait (bounded) to say why.
		t := time.NewTimer(3 * stopGrace)
		select {
		case <-ending.ended:
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.notRunningLocked()
}

// notRunningLocked is what a call is told while the server is down: its
// state and why (s.mu held).
func (s *server) notRunningLocked() error {
	st := s.state
	if st == StateRunning { // its session just ended; run is about to restart it
		st = StateRestarting
	}
	if s.lastErr == "" {
		return fmt.Errorf("MCP server %s is not running (%s)", s.cfg.Name, st)
	}
	return fmt.Errorf("MCP server %s is not running (%s: %s)", s.cfg.Name, st, s.lastErr)
}
