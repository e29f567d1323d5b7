package toolhost

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// Defaults for zero Limits fields.
const (
	DefaultMaxConcurrent = 8
	DefaultQueue         = 64
	// DefaultMaxResultBytes leaves room for the envelope under the server's
	// 100 MiB frame limit.
	DefaultMaxResultBytes = 64 << 20
)

// Limits bound the dispatcher.
type Limits struct {
	// MaxConcurrent is how many calls run at once; 0 means DefaultMaxConcurrent.
	MaxConcurrent int
	// Queue is how many calls may wait for a slot; 0 means DefaultQueue and a
	// negative value means no queue (refuse when every slot is taken).
	Queue int
	// MaxResultBytes caps a marshalled result (and an error text); 0 means DefaultMaxResultBytes.
	MaxResultBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = DefaultMaxConcurrent
	}
	switch {
	case l.Queue == 0:
		l.Queue = DefaultQueue
	case l.Queue < 0:
		l.Queue = 0
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	return l
}

// Errors behind Outcome.Cause for outcomes the dispatcher makes itself.
// The Err text the server sees is Cause.Error().
var (
	// ErrUnknownTool: no such tool, or it is not exposed (the two are not told apart).
	ErrUnknownTool = errors.New("unknown tool")
	// ErrBusy: every slot and every queue place is taken.
	ErrBusy = errors.New("node busy")
	// ErrShuttingDown: the call arrived after Shutdown began, or Shutdown cancelled it.
	ErrShuttingDown = errors.New("node is shutting down")
	// ErrCancelled: the server sent cancel_tool for the call.
	ErrCancelled = errors.New("cancelled by the server")
	// ErrTimeout: the node's own deadline passed.
	ErrTimeout = errors.New("timed out")
	// ErrToolPanic: the tool panicked.
	ErrToolPanic = errors.New("panicked")
)

// Dispatcher runs calls against the registry under the policy and the limits.
// It is what the node calls for every execute_tool and cancel_tool.
type Dispatcher struct {
	// view is the tool set and the policy over it, swapped together so
	// that a call never sees new tools under the old policy or the reverse.
	view atomic.Pointer[toolView]
	lim  Limits
	log  zerolog.Logger

	mu      sync.Mutex
	calls   map[string]*call // accepted and not yet finished (queued or running), by requestId
	queue   []*call          // waiting for a slot, oldest first
	running int
	seq     uint64         // numbers accepted calls, for a stable InFlight order
	perTool map[string]int // running calls per tool name
	closing bool
	active  int                       // goroutines started by the dispatcher and not yet returned
	idle    chan struct{}             // closed when active drops to zero; made on demand by waiters
	repeats map[repeatKey][]time.Time // the loop guard's recent calls (repeat.go)

	approvals *Approvals                         // calls held for the owner (approval.go)
	rules     atomic.Pointer[ApprovalRules]      // the owner's remembered answers (approval_rules.go)
	observers atomic.Pointer[[]func(CallRecord)] // see Observe
	missing   atomic.Pointer[MissingFunc]        // see SetMissing
}

// MissingFunc says why tool is not registered for now (its MCP server is
// starting or restarting), with a Spec for the exposure policy; a nil error
// means the tool is simply unknown.
type MissingFunc func(tool string) (Spec, error)

// SetMissing sets what a call of a tool that is not registered is told: f's
// error when it has one (and the tool would be exposed to the caller), else
// ErrUnknownTool. f runs under the dispatcher's lock: it must be quick and
// must not call the dispatcher.
func (d *Dispatcher) SetMissing(f MissingFunc) { d.missing.Store(&f) }

// unknownToolErr is what a call of toolName, which is not registered, is told.
func (d *Dispatcher) unknownToolErr(pol *Policy, toolName string, local bool) error {
	if f := d.missing.Load(); f != nil && *f != nil {
		if spec, why := (*f)(toolName); why != nil && (local || pol.Decide(spec).Exposed) {
			return why
		}
	}
	return fmt.Errorf("%w %q", ErrUnknownTool, toolName)
}

// call is one accepted call.
type call struct {
	Call
	name     string
	seq      uint64
	tool     Tool
	spec     Spec // the tool's, for checking a typed call's arguments
	reply    func(Outcome)
	limit    time.Duration // the node's own deadline, measured from accepted
	margin   time.Duration // between limit and the timeout the server was told
	toolMax  int
	maxBytes int    // result cap for this call
	oversize string // what a result above it becomes (Policy.Oversize)
	accepted time.Time
	deadline time.Time

	ctx          context.Context
	cancel       context.CancelCauseFunc
	stopDeadline context.CancelFunc

	ready   chan struct{} // closed when the call is granted a slot
	granted bool          // guarded by Dispatcher.mu, like running
	running bool
	// orphaned: its origin ended while it ran; its slot no longer counts
	// against later calls (guarded by Dispatcher.mu).
	orphaned bool

	ask          bool             // must be approved by the owner before it queues
	awaiting     bool             // held for the owner now; guarded by Dispatcher.mu
	approvalWait time.Duration    // longest wait for the owner
	approval     ApprovalDecision // written only by the call's own goroutine
	command      string           // the command it addresses (CallCommand), for the owner
}

// InFlightCall describes an accepted call for status output.
type InFlightCall struct {
	RequestID string
	Tool      string
	Started   time.Time // when the call was accepted
	Deadline  time.Time // when the node gives up on it
	Queued    bool      // still waiting for a slot
	Local     bool
	// AwaitingApproval: held until the owner approves it (not yet queued).
	AwaitingApproval bool
}

// NewDispatcher returns a dispatcher over reg. Zero Limits fields take the defaults.
func NewDispatcher(reg *Registry, policy Policy, lim Limits, log zerolog.Logger) *Dispatcher {
	d := &Dispatcher{
		lim:       lim.withDefaults(),
		log:       log,
		calls:     make(map[string]*call),
		perTool:   make(map[string]int),
		approvals: NewApprovals(),
	}
	d.Swap(reg, policy)
	return d
}

// toolView is what one call resolves its tool and rules against.
type toolView struct {
	reg    *Registry
	policy *Policy
}

// SetPolicy replaces the policy. Every later call, and every later Manifests
// or Tools, sees the new one; calls already accepted keep their limits.
func (d *Dispatcher) SetPolicy(p Policy) {
	c := p.clone()
	for {
		old := d.view.Load()
		next := &toolView{policy: &c}
		if old != nil {
			next.reg = old.reg
		}
		if d.view.CompareAndSwap(old, next) {
			return
		}
	}
}

// Swap puts reg and p in force in one step: every later call sees both or
// neither. Calls already accepted keep the tool and limits they started with.
func (d *Dispatcher) Swap(reg *Registry, p Policy) {
	c := p.clone()
	d.view.Store(&toolView{reg: reg, policy: &c})
}

// Policy returns the current policy.
func (d *Dispatcher) Policy() Policy { return d.view.Load().policy.clone() }

// Dispatch accepts one call and returns at once; it never blocks on the tool.
//
// It returns false, and never calls reply, when call.RequestID is empty or
// already queued or running (the server's duplicate is ignored). Otherwise
// it returns true and reply is called exactly once, from a goroutine the
// dispatcher owns, with the outcome: the result, or an error such as
// unknown tool, busy, shutting down, timed out, cancelled, or the tool's own.
//
// A tool that is not exposed under the current policy is refused with the
// same error as an unknown one, unless call.Local is set (the node's owner
// calling through the CLI). A remote call of a tool whose approval is
// "deny" is refused, and one whose approval is "ask" is held until the
// owner decides (approval.go); local calls skip both. The call runs under
// ctx; cancelling ctx cancels the call. A nil reply drops the outcome.
func (d *Dispatcher) Dispatch(ctx context.Context, toolName string, in Call, reply func(Outcome)) bool {
	if reply == nil {
		reply = func(Outcome) {}
	}
	if in.RequestID == "" {
		d.log.Warn().Str(fieldTool, humantext.ClipWire(toolName)).Msg("ignored a call without a requestId")
		return false
	}
	if ev := d.log.Debug(); ev.Enabled() {
		ev.Str(fieldTool, humantext.ClipWire(toolName)).Str(fieldRequestID, humantext.ClipWire(in.RequestID)).Bool(fieldLocal, in.Local).
			Strs(fieldArgNames, argNames(in.Args)).Msg("call received")
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.calls[in.RequestID]; dup {
		d.log.Warn().Str(fieldTool, humantext.ClipWire(toolName)).Str(fieldRequestID, humantext.ClipWire(in.RequestID)).
			Msg("ignored a duplicate call: a call with this requestId is already queued or running")
		return false
	}
	if d.closing {
		d.rejectLocked(in, toolName, reply, ErrShuttingDown)
		return true
	}
	view := d.view.Load()
	pol := view.policy
	e, routed, ok := view.reg.resolve(toolName)
	if !ok {
		d.rejectLocked(in, toolName, reply, d.unknownToolErr(pol, toolName, in.Local))
		return true
	}
	if e.spec.Name != toolName {
		// An alias or {tool}_{command}: the call is the tool's, under its name.
		toolName = e.spec.Name
		if _, given := in.Args[schema.CommandArg]; routed != "" && !given {
			in.Args = maps.Clone(in.Args)
			if in.Args == nil {
				in.Args = map[string]json.RawMessage{}
			}
			in.Args[schema.CommandArg], _ = json.Marshal(routed)
		}
	}
	if !in.Local && !pol.Decide(e.spec).Exposed {
		d.rejectLocked(in, toolName, reply, fmt.Errorf("%w %q", ErrUnknownTool, toolName))
		return true
	}
	if err := pol.hiddenCommandErr(e.spec, in.Args); err != nil {
		d.rejectLocked(in, toolName, reply, err)
		return true
	}
	// The owner's approval gate (approval.go). Local calls are the owner's
	// own, unless Gated (an MCP client calling for its model); a call of
	// the server's own tools passes it whoever makes it, as it acts beyond
	// this machine (the server's memory, its paid services).
	mode, approvalWait := pol.Approval(e.spec)
	gate := !in.Local || in.Gated
	approve := gate || e.spec.FromServer
	// The loop guard (repeat.go) stops a model that calls the same thing
	// over and over; the owner's own calls are not a model's.
	if gate {
		if err := d.repeatedLocked(pol, toolName, in.Args, now); err != nil {
			d.rejectLocked(in, toolName, reply, err)
			return true
		}
	}
	var rule *ApprovalRule
	command := CallCommand(e.spec, in.Args)
	if approve {
		v := approvalGate(pol, d.ApprovalRules(), toolName, mode, command)
		mode, rule = v.mode, v.rule
	}
	if approve && mode == ApprovalDeny {
		err := fmt.Errorf("tool %q %w", toolName, ErrRefused)
		if rule != nil && rule.Reason != "" {
			err = fmt.Errorf("tool %q %w: %s", toolName, ErrRefused, rule.Reason)
		}
		d.rejectLocked(in, toolName, reply, err)
		return true
	}
	ask := approve && mode == ApprovalAsk
	toolMax := pol.MaxConcurrent(toolName)
	// A call awaiting approval takes no queue place yet: it is checked
	// against the limits once approved.
	if !ask && !d.canRunLocked(toolName, toolMax) && len(d.queue) >= d.lim.Queue {
		d.rejectLocked(in, toolName, reply, fmt.Errorf("%w: %d calls running and %d queued; try again later",
			ErrBusy, d.running, len(d.queue)))
		return true
	}

	// The server's timer runs from its send, so the node's deadline counts
	// queueing too and ends a margin before the timeout the server was told.
	timeout := min(pol.Timeout(e.spec), maxWireTimeout)
	margin := min(3*time.Second, timeout/10)
	limit := timeout - margin
	base, cancel := context.WithCancelCause(ctx)
	cctx, stop := context.WithDeadlineCause(base, now.Add(limit), ErrTimeout)
	c := &call{
		Call: in, name: toolName, tool: e.tool, spec: e.spec, reply: reply,
		limit: limit, margin: margin, toolMax: toolMax, maxBytes: d.lim.MaxResultBytes, oversize: pol.Oversize,
		accepted: now, deadline: now.Add(limit),
		ctx: cctx, cancel: cancel, stopDeadline: stop,
		ready: make(chan struct{}),
		ask:   ask, awaiting: ask, approvalWait: approvalWait, approval: DecisionAuto, command: command,
	}
	switch {
	case !approve && mode != ApprovalAuto:
		c.approval = DecisionLocal
	case rule != nil:
		c.approval = DecisionRemembered
	}
	if e.spec.MaxResultBytes > 0 {
		c.maxBytes = e.spec.MaxResultBytes
	}
	d.seq++
	c.seq = d.seq
	d.calls[in.RequestID] = c
	if !ask {
		d.queue = append(d.queue, c)
		d.pumpLocked()
	}
	d.active++
	go d.run(c)
	return true
}

// Cancel cancels the call with this requestId, queued or running, for
// cancel_tool. Its reply ("cancelled by the server") is still produced. It
// reports whether such a call was found.
func (d *Dispatcher) Cancel(requestID string) bool {
	d.mu.Lock()
	c, ok := d.calls[requestID]
	d.mu.Unlock()
	if ok {
		c.cancel(ErrCancelled)
	}
	return ok
}

// InFlight lists the accepted calls, oldest first.
func (d *Dispatcher) InFlight() []InFlightCall {
	d.mu.Lock()
	calls := make([]*call, 0, len(d.calls))
	for _, c := range d.calls {
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]InFlightCall, len(calls))
	for i, c := range calls {
		out[i] = InFlightCall{
			RequestID: c.RequestID, Tool: c.name, Started: c.accepted, Deadline: c.deadline,
			Queued: !c.running && !c.awaiting, Local: c.Local, AwaitingApproval: c.awaiting,
		}
	}
	d.mu.Unlock()
	return out
}

// Load reports the calls holding a slot and those queued for one, for metrics.
func (d *Dispatcher) Load() (running, queued int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running, len(d.queue)
}

// StopAccepting makes every later call get "node is shutting down", as
// Shutdown does; for a caller that announces the shutdown before waiting
// in Shutdown.
func (d *Dispatcher) StopAccepting() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
}

// Shutdown stops accepting calls (they get "node is shutting down") and waits
// for the accepted ones, queued calls included, to finish and be replied to.
// When ctx ends first, it cancels the rest, waits for their tools to return,
// and reports how many it cancelled. Calling it again waits again.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	d.mu.Lock()
	d.closing = true
	// Calls still awaiting the owner are refused now rather than held
	// through the grace period.
	for _, c := range d.calls {
		if c.awaiting {
			c.cancel(ErrShuttingDown)
		}
	}
	d.mu.Unlock()
	if d.waitIdle(ctx) {
		return nil
	}
	d.mu.Lock()
	n := len(d.calls)
	for _, c := range d.calls {
		c.cancel(ErrShuttingDown)
	}
	d.mu.Unlock()
	d.waitIdle(context.Background())
	if n == 0 {
		return nil
	}
	return fmt.Errorf("shutdown cancelled %d unfinished calls: %w", n, context.Cause(ctx))
}

// waitIdle waits until no dispatcher goroutine is left, or ctx ends (false).
func (d *Dispatcher) waitIdle(ctx context.Context) bool {
	for {
		d.mu.Lock()
		if d.active == 0 {
			d.mu.Unlock()
			return true
		}
		if d.idle == nil {
			d.idle = make(chan struct{})
		}
		idle := d.idle
		d.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}

// goroutineDone is deferred by every goroutine the dispatcher starts.
func (d *Dispatcher) goroutineDone() {
	d.mu.Lock()
	d.active--
	if d.active == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
	d.mu.Unlock()
}

// canRunLocked reports whether a call of this tool would get a slot now.
func (d *Dispatcher) canRunLocked(name string, toolMax int) bool {
	return d.running < d.lim.MaxConcurrent && (toolMax == 0 || d.perTool[name] < toolMax)
}

// pumpLocked grants free slots to queued calls, oldest first, skipping calls
// held back by their tool's own limit so they do not block other tools.
func (d *Dispatcher) pumpLocked() {
	kept := d.queue[:0]
	for _, c := range d.queue {
		if d.canRunLocked(c.name, c.toolMax) {
			d.running++
			d.perTool[c.name]++
			c.granted = true
			close(c.ready)
			continue
		}
		kept = append(kept, c)
	}
	clear(d.queue[len(kept):])
	d.queue = kept
}

// releaseLocked gives back c's slot, or its queue place if it never got one,
// and forgets the call.
func (d *Dispatcher) releaseLocked(c *call) {
	if c.granted && !c.orphaned {
		d.freeSlotLocked(c)
	} else if i := slices.Index(d.queue, c); i >= 0 {
		d.queue = slices.Delete(d.queue, i, i+1)
	}
	delete(d.calls, c.RequestID)
	d.pumpLocked()
}

func (d *Dispatcher) freeSlotLocked(c *call) {
	d.running--
	if d.perTool[c.name]--; d.perTool[c.name] == 0 {
		delete(d.perTool, c.name)
	}
}

// rejectLocked answers a call that is not accepted, from a goroutine, so
// that Dispatch never waits on reply.
func (d *Dispatcher) rejectLocked(in Call, toolName string, reply func(Outcome), cause error) {
	d.active++
	go func() {
		defer d.goroutineDone()
		o := Outcome{RequestID: in.RequestID, Err: cause.Error(), Cause: cause}
		var decision ApprovalDecision
		if errors.Is(cause, ErrRefused) {
			decision = DecisionRefused
		}
		d.logDone(toolName, in, o, 0, 0, decision)
		reply(o)
	}()
}
