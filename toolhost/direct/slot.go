package direct

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// slot is one direct plugin and the Node.js host that runs it: it starts
// the host, restarts it with backoff after a crash, and kills and restarts
// it when a call does not settle after its deadline.
type slot struct {
	h    *Host
	p    *plugin.DirectPlugin
	key  string // what the host was started with; a reload that changes it replaces the slot
	node string
	mem  int
	// profile is the sandbox profile the host runs under.
	profile string
	log     zerolog.Logger

	nextID atomic.Uint64

	ctx    context.Context // ends when the slot is stopped
	cancel context.CancelFunc
	loop   sync.WaitGroup

	mu      sync.Mutex
	cur     *proc         // the ready host, nil while down
	changed chan struct{} // closed and replaced whenever cur or lastErr changes
	lastErr error         // why the host is down
	// notice is the first host's: what the module offers that the node
	// does not. Set by Load before the slot is published, then only read.
	notice string
}

// loadError is a module that cannot run here: the scan lists it with Reason.
type loadError struct{ Reason string }

func (e *loadError) Error() string { return e.Reason }

func newSlot(h *Host, p *plugin.DirectPlugin, node, key string, mem int, profile string) *slot {
	ctx, cancel := context.WithCancel(h.ctx)
	return &slot{
		h: h, p: p, key: key, node: node, mem: mem, profile: profile,
		log:     h.log.With().Str("plugin", p.Name).Logger(),
		ctx:     ctx,
		cancel:  cancel,
		changed: make(chan struct{}),
	}
}

// launch starts a host and brings the module up: import, export checks,
// initialize. The returned error is a *loadError when the module itself
// cannot run here.
func (s *slot) launch() (*proc, error) {
	if s.h.trees == nil {
		return nil, &loadError{Reason: "cannot track Node.js host processes here: " + s.h.treesErr.Error()}
	}
	untrack := s.h.track()
	p, err := spawn(s.h.trees, s.h.opts.Sandbox, sandbox.Command{
		Tool: s.p.Name, Kind: "plugin", Profile: s.profile,
		Path: s.node, Args: append([]string{s.node}, nodeArgs(s.mem, s.p.Name)...), Env: s.p.Env, Dir: s.p.Dir,
		Declared: s.p.Declared, Own: s.p.Own,
	}, s.log, untrack)
	if err != nil {
		untrack()
		return nil, fmt.Errorf("start %s: %w", s.node, err)
	}
	s.h.started.Add(1)
	ok := false
	defer func() {
		if !ok {
			p.kill(errors.New("the module did not come up"))
			<-p.done
		}
	}()
	timer := time.NewTimer(s.h.opts.LoadTimeout)
	defer timer.Stop()
	await := func(stage string) (inMsg, error) {
		select {
		case m := <-p.control:
			return m, nil
		case <-p.done:
			return inMsg{}, &loadError{Reason: fmt.Sprintf("Node.js host ended during %s: %v%s", stage, p.reason(), stderrHint(p))}
		case <-timer.C:
			return inMsg{}, &loadError{Reason: fmt.Sprintf("%s took longer than %s", stage, s.h.opts.LoadTimeout)}
		case <-s.ctx.Done():
			return inMsg{}, ErrClosed
		}
	}
	if err := p.send(outMsg{T: "load", Name: s.p.Name, Type: s.p.Type, Script: s.p.Script, Config: s.p.Config}); err != nil {
		return nil, err
	}
	m, err := await("loading the module")
	if err != nil {
		return nil, err
	}
	if m.T == "failed" {
		return nil, &loadError{Reason: p.sb.Explain(errors.New(loadReason(s.p, m)), []byte(deref(m.Error))).Error()}
	}
	if reason := exportProblem(s.p, m.Exports); reason != "" {
		return nil, &loadError{Reason: reason}
	}
	p.notice = routesNotice(m.Exports)
	if err := p.send(outMsg{T: "init"}); err != nil {
		return nil, err
	}
	if m, err = await("initialize()"); err != nil {
		return nil, err
	}
	switch {
	case m.T == "failed" && !s.p.Answers():
		return nil, &loadError{Reason: p.sb.Explain(errors.New("initialize() failed: "+firstLine(m.Error)), []byte(deref(m.Error))).Error()}
	case m.T == "failed":
		// Kept, as the official node keeps it: the tool stays registered
		// (the server cannot add it later without a new connection) and
		// each call reaches processToolCall, which answers for itself —
		// often with its own error until its dependency is back.
		why := p.sb.Explain(errors.New("initialize() failed: "+firstLine(m.Error)), []byte(deref(m.Error))).Error()
		s.log.Warn().Str("reason", why).Msg("direct plugin's initialize() failed; its tool stays registered and calls reach processToolCall")
		p.notice = joinNotices(p.notice, why+"; the tool is registered anyway and calls reach its processToolCall, as on the official node")
	case m.T != "ready":
		return nil, fmt.Errorf("unexpected %q message from the Node.js host", m.T)
	}
	ok = true
	s.log.Debug().Int("pid", p.pid).Dur("took", time.Since(p.start)).Msg("direct plugin loaded")
	return p, nil
}

// exportProblem says why a module with these exports cannot be offered.
func exportProblem(p *plugin.DirectPlugin, exports []string) string {
	has := func(name string) bool { return slices.Contains(exports, name) }
	var routes []string
	for _, r := range []string{"registerRoutes", "registerApiRoutes"} {
		if has(r) {
			routes = append(routes, r)
		}
	}
	switch {
	case p.Answers() && !has("processToolCall"):
		return "the module exports no processToolCall function, which a hybridservice plugin answers calls with"
	case !p.Answers() && len(routes) > 0:
		return fmt.Sprintf("the service exports %s: it serves HTTP routes on the VCP server, and the node has no web server for plugins",
			strings.Join(routes, " and "))
	}
	return ""
}

// routesNotice says what a hybridservice that also serves HTTP routes
// loses here; "" when it serves none.
func routesNotice(exports []string) string {
	var routes []string
	for _, r := range []string{"registerRoutes", "registerApiRoutes"} {
		if slices.Contains(exports, r) {
			routes = append(routes, r)
		}
	}
	if len(routes) == 0 {
		return ""
	}
	return fmt.Sprintf("exports %s: the node has no web server for plugins, so its HTTP routes are not served (its tool works)",
		strings.Join(routes, " and "))
}

func joinNotices(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// loadReason is the first line of the module's load error, with a hint for
// the two usual causes.
func loadReason(p *plugin.DirectPlugin, m inMsg) string {
	msg := firstLine(m.Error)
	reason := "the module does not load: " + msg
	if m.Code == "MODULE_NOT_FOUND" || m.Code == "ERR_MODULE_NOT_FOUND" {
		switch {
		case strings.Contains(msg, "/Plugin.js") || strings.Contains(msg, "/modules/"):
			reason += " (it needs the VCP server's own files, which exist only inside VCPToolBox)"
		default:
			reason += fmt.Sprintf(" (a missing npm package? run npm install in %s or its project)", p.Dir)
		}
	}
	return reason
}

// deref is the whole message (its stack names the files involved).
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func firstLine(s *string) string {
	if s == nil {
		return "(no message)"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(*s), "\n")
	return strings.TrimSpace(line)
}

// stderrHint quotes the summary of what the host wrote to stderr (its
// first error line and last lines); the rest is in the log at debug level.
func stderrHint(p *proc) string {
	p.mu.Lock()
	sum := p.errs.String()
	p.mu.Unlock()
	if sum == "" {
		return " (no output on stderr)"
	}
	return "; stderr: " + sum
}

// run supervises the host after the first launch: when it goes away (a
// crash, process.exit, a kill for a stuck call) it is started again after
// a backoff, until the slot is stopped.
func (s *slot) run(first *proc) {
	defer s.loop.Done()
	p := first
	delay := backoffStart
	for {
		s.set(p, nil)
		select {
		case <-p.done:
		case <-s.ctx.Done():
			s.shutdown(p)
			s.set(nil, ErrClosed)
			return
		}
		why := p.reason()
		s.set(nil, why)
		if time.Since(p.start) >= backoffReset {
			delay = backoffStart
		}
		s.log.Warn().Err(why).Dur("restart_in", delay).Msg("direct plugin's Node.js host went away; restarting it")
		for {
			select {
			case <-time.After(delay):
			case <-s.ctx.Done():
				s.set(nil, ErrClosed)
				return
			}
			delay = min(delay*2, backoffMax)
			next, err := s.launch()
			if errors.Is(err, ErrClosed) {
				s.set(nil, ErrClosed)
				return
			}
			if err != nil {
				s.log.Warn().Err(err).Dur("retry_in", delay).Msg("direct plugin did not come back up")
				s.set(nil, err)
				continue
			}
			p = next
			s.h.restarts.Add(1)
			break
		}
	}
}

// set publishes the host state and wakes the callers waiting for it.
func (s *slot) set(p *proc, err error) {
	s.mu.Lock()
	s.cur, s.lastErr = p, err
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// ready returns the running host, waiting while it is being restarted.
func (s *slot) ready(ctx context.Context) (*proc, error) {
	for {
		s.mu.Lock()
		p, lastErr, changed := s.cur, s.lastErr, s.changed
		s.mu.Unlock()
		if p != nil && !p.dying() {
			return p, nil
		}
		if errors.Is(lastErr, ErrClosed) {
			return nil, fmt.Errorf("plugin %q: %w", s.p.Name, ErrClosed)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("plugin %q: %w (restarting after: %v)", s.p.Name, ErrNotRunning, lastErr)
		}
	}
}

// shutdown asks the module to shut down (its in-flight calls are aborted),
// waits up to Grace, then kills the group.
func (s *slot) shutdown(p *proc) {
	if err := p.send(outMsg{T: "shutdown"}); err == nil {
		t := time.NewTimer(s.h.opts.Grace)
		defer t.Stop()
		select {
		case <-p.done:
			return
		case <-t.C:
			s.log.Warn().Dur("after", s.h.opts.Grace).Msg("direct plugin did not shut down in time; killing its Node.js host")
		}
	}
	p.kill(fmt.Errorf("plugin %q stopped: %w", s.p.Name, ErrClosed))
	<-p.done
}

// stop ends the slot: shutdown() then the host's process group.
func (s *slot) stop() {
	s.cancel()
	s.loop.Wait()
}

// call runs one processToolCall.
func (s *slot) call(ctx context.Context, call toolhost.Call) (any, error) {
	id := strconv.FormatUint(s.nextID.Add(1), 10)
	var (
		p  *proc
		ch chan callReply
	)
	for {
		var err error
		if p, err = s.ready(ctx); err != nil {
			return nil, err
		}
		var ok bool
		if ch, ok = p.register(id); !ok {
			<-p.done // going away (pending is dropped just before done closes)
			continue // the call never reached it: wait for the next host
		}
		if err := p.send(outMsg{T: "call", ID: id, Args: call.Args, Ctx: call.Context}); err != nil {
			p.unregister(id)
			if isClosed(p.done) {
				continue
			}
			return nil, fmt.Errorf("plugin %q: %w", s.p.Name, err)
		}
		break
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("plugin %q: call lost: %v; %w", s.p.Name, p.reason(), ErrRestarted)
		}
		if r.err != nil {
			// A sandbox refusal names the profile (EACCES in the message).
			return nil, p.sb.Explain(errors.New(strings.TrimSpace(*r.err)))
		}
		res, err := plugin.DirectResult(s.p.Name, r.value)
		if err != nil {
			// A module that catches its error answers {status: "error"}:
			// a refusal in it is the sandbox's all the same.
			return nil, p.sb.Explain(err)
		}
		return res, nil
	case <-ctx.Done():
		cause := context.Cause(ctx)
		// Not waited for: a host whose event loop is stuck stops reading,
		// and Invoke must return now.
		go func() { _ = p.send(outMsg{T: "cancel", ID: id, Reason: abortReason(cause)}) }()
		go s.watch(p, id, ch, cause)
		return nil, cause
	}
}

// watch waits Grace for an aborted call to settle; a call that does not
// means the module ignores its AbortSignal and may hold anything, so its
// host is killed (the supervisor starts a new one).
func (s *slot) watch(p *proc, id string, ch chan callReply, cause error) {
	t := time.NewTimer(s.h.opts.Grace)
	defer t.Stop()
	select {
	case <-ch:
	case <-p.done:
	case <-t.C:
		why := fmt.Errorf("the Node.js host was killed: call %s was still running %s after it was aborted (%v)", id, s.h.opts.Grace, cause)
		s.log.Warn().Err(why).Int("pid", p.pid).Msg("killing the direct plugin's Node.js host")
		// Marked, counted, then killed: whoever sees the count sees the
		// host dying (a new call waits for the next one), and whoever sees
		// the kill fail the host's other calls sees it counted.
		p.doom(why)
		s.h.kills.Add(1)
		p.kill(why)
	}
}

// abortReason names the cause for the AbortSignal's error.
func abortReason(cause error) string {
	switch {
	case errors.Is(cause, toolhost.ErrTimeout), errors.Is(cause, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(cause, toolhost.ErrCancelled):
		return "cancelled"
	default:
		return "shutdown"
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
