package toolhost

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// ApprovalMode is a tool's [tools.NAME] approval setting: whether the node's
// owner confirms each call the server makes.
type ApprovalMode string

// Approval modes.
const (
	// ApprovalAuto runs calls without asking (the default).
	ApprovalAuto ApprovalMode = "auto"
	// ApprovalAsk holds each remote call until the owner approves or denies
	// it (vcpnode approve/deny) or the approval timeout passes.
	ApprovalAsk ApprovalMode = "ask"
	// ApprovalDeny refuses every remote call.
	ApprovalDeny ApprovalMode = "deny"
)

// ApprovalModes lists the valid modes, for config checks and messages.
var ApprovalModes = []ApprovalMode{ApprovalAuto, ApprovalAsk, ApprovalDeny}

// DefaultApprovalTimeout is how long a call waits for the owner when the
// config does not say.
const DefaultApprovalTimeout = 2 * time.Minute

// maxPendingApprovals bounds the calls held for the owner at once, so that a
// flood of calls cannot pile up goroutines no one will ever answer.
const maxPendingApprovals = 64

// maxReasonBytes caps a deny reason: it travels to the server in the error.
const maxReasonBytes = 200

// ApprovalDecision is how the approval gate let a call through or not; it
// is logged and recorded for every call that reached the gate.
type ApprovalDecision string

// Approval decisions.
const (
	DecisionAuto     ApprovalDecision = "auto"     // no approval needed
	DecisionLocal    ApprovalDecision = "local"    // the owner called it (vcpnode call): not asked
	DecisionApproved ApprovalDecision = "approved" // the owner approved it
	DecisionDenied   ApprovalDecision = "denied"   // the owner denied it
	DecisionRefused  ApprovalDecision = "refused"  // approval = "deny"
	DecisionExpired  ApprovalDecision = "expired"  // nobody answered in time
	// DecisionRemembered: an "always allow" rule let it through unasked.
	DecisionRemembered ApprovalDecision = "remembered"
)

// Errors behind the outcomes of the approval gate.
var (
	// ErrRefused: the tool's approval is "deny".
	ErrRefused = errors.New("refused by the node's owner")
	// ErrDenied: the owner denied this call.
	ErrDenied = errors.New("denied by the node's owner")
	// ErrNotApproved: the owner did not answer within the approval timeout.
	ErrNotApproved = errors.New("not approved")
	// ErrNoSuchApproval: Decide was given an id that is not pending.
	ErrNoSuchApproval = errors.New("no pending approval with this id")
)

// errApprovalInterrupted: the call's context ended (cancel_tool, shutdown)
// while it waited for the owner; the dispatcher reports the real cause.
var errApprovalInterrupted = errors.New("interrupted while awaiting approval")

// PendingApproval is a call held until the owner decides.
type PendingApproval struct {
	// ID is what `vcpnode approve ID` takes: short and typable.
	ID        string
	RequestID string
	Tool      string
	// Command is the command of the tool the call addresses (CallCommand);
	// an "always" answer remembers it with the tool.
	Command string
	// Args are shown to the owner, who needs them to decide. They never go
	// to the log above debug level.
	Args      map[string]json.RawMessage
	Requested time.Time
	Expires   time.Time
}

// Approvals holds calls awaiting the owner's decision. The dispatcher puts
// calls in; the control API lists and decides them.
type Approvals struct {
	mu      sync.Mutex
	seq     uint64
	pending map[string]*pendingCall
	changed chan struct{} // closed and replaced on every change
}

type pendingCall struct {
	info    PendingApproval
	decided chan verdict // buffered: Decide never blocks
}

type verdict struct {
	allow  bool
	reason string
	rule   bool // a remembered rule decided, not the owner's answer to this call
}

// NewApprovals returns an empty broker.
func NewApprovals() *Approvals {
	return &Approvals{pending: make(map[string]*pendingCall), changed: make(chan struct{})}
}

// Pending lists the calls awaiting a decision, oldest first.
func (a *Approvals) Pending() []PendingApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]PendingApproval, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.info)
	}
	slices.SortFunc(out, func(x, y PendingApproval) int {
		return cmp.Or(x.Requested.Compare(y.Requested), cmp.Compare(len(x.ID), len(y.ID)), strings.Compare(x.ID, y.ID))
	})
	return out
}

// Get returns the pending call id, if it is still pending.
func (a *Approvals) Get(id string) (PendingApproval, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[id]
	if !ok {
		return PendingApproval{}, false
	}
	return p.info, true
}

// Len counts the pending calls.
func (a *Approvals) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

// Changes returns a channel closed at the next change of the pending set,
// so that a waiter needs no polling.
func (a *Approvals) Changes() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

// Decide approves (allow) or denies the pending call id; reason, when
// denying, is added to the error the server sees. It returns the call
// decided, or ErrNoSuchApproval when id is not pending (already decided,
// expired, or never existed).
func (a *Approvals) Decide(id string, allow bool, reason string) (PendingApproval, error) {
	return a.decide(id, verdict{allow: allow, reason: cleanReason(reason)})
}

func (a *Approvals) decide(id string, v verdict) (PendingApproval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[id]
	if !ok {
		return PendingApproval{}, fmt.Errorf("%w: %q (it may have been decided or have expired; vcpnode approvals lists the pending ones)", ErrNoSuchApproval, id)
	}
	p.decided <- v
	a.removeLocked(id)
	return p.info, nil
}

// await holds the call described by info until the owner decides, wait
// passes, or ctx ends. It returns nil only when the call was approved.
func (a *Approvals) await(ctx context.Context, info PendingApproval, wait time.Duration) (ApprovalDecision, error) {
	a.mu.Lock()
	if len(a.pending) >= maxPendingApprovals {
		a.mu.Unlock()
		return "", fmt.Errorf("%w: %d calls are already awaiting the owner's approval", ErrBusy, maxPendingApprovals)
	}
	a.seq++
	info.ID = strconv.FormatUint(a.seq, 10)
	p := &pendingCall{info: info, decided: make(chan verdict, 1)}
	a.pending[info.ID] = p
	a.notifyLocked()
	a.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var v verdict
	select {
	case v = <-p.decided:
	case <-timer.C:
		if !a.withdraw(info.ID) {
			v = <-p.decided // Decide won the race and has already answered
			break
		}
		return DecisionExpired, notApproved(info.Tool, wait)
	case <-ctx.Done():
		if !a.withdraw(info.ID) {
			v = <-p.decided
			break
		}
		if errors.Is(context.Cause(ctx), ErrTimeout) {
			// The call's own deadline came first: still, nobody approved it.
			return DecisionExpired, notApproved(info.Tool, wait)
		}
		return "", errApprovalInterrupted
	}
	switch {
	case v.allow && v.rule:
		return DecisionRemembered, nil
	case v.allow:
		return DecisionApproved, nil
	case v.rule && v.reason != "":
		return DecisionRefused, fmt.Errorf("tool %q %w: %s", info.Tool, ErrRefused, v.reason)
	case v.rule:
		return DecisionRefused, fmt.Errorf("tool %q %w", info.Tool, ErrRefused)
	}
	if v.reason != "" {
		return DecisionDenied, fmt.Errorf("tool %q %w: %s", info.Tool, ErrDenied, v.reason)
	}
	return DecisionDenied, fmt.Errorf("tool %q %w", info.Tool, ErrDenied)
}

// withdraw removes id if it is still pending and reports whether it was.
func (a *Approvals) withdraw(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[id]; !ok {
		return false
	}
	a.removeLocked(id)
	return true
}

func (a *Approvals) removeLocked(id string) {
	delete(a.pending, id)
	a.notifyLocked()
}

func (a *Approvals) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func notApproved(tool string, wait time.Duration) error {
	return fmt.Errorf("tool %q %w within %s by the node's owner", tool, ErrNotApproved, humantext.Duration(wait))
}

// cleanReason keeps a deny reason short and printable: it ends up in the
// error text the server and the model read.
func cleanReason(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimSpace(s)
	if len(s) > maxReasonBytes {
		s = humantext.Truncate(s, maxReasonBytes-len("…")) + "…"
	}
	return s
}

// Approval returns the tool's approval mode and how long a call waits for
// the owner: [tools.NAME] approval, else the tool's own default, else auto.
func (p Policy) Approval(s Spec) (ApprovalMode, time.Duration) {
	o := p.Tools[s.Name]
	mode, wait := o.Approval, o.ApprovalTimeout
	if mode == "" {
		mode = s.Approval
	}
	if mode == "" {
		mode = ApprovalAuto
	}
	if wait <= 0 {
		wait = DefaultApprovalTimeout
	}
	return mode, wait
}

// Approvals is the broker holding this dispatcher's calls that await the owner.
func (d *Dispatcher) Approvals() *Approvals { return d.approvals }

// awaitApproval holds c until the owner decides. When the call may go on it
// queues it for a slot and returns true; otherwise it answers the call and
// returns false. The wait counts against the call's deadline, and is cut
// to what is left of it.
func (d *Dispatcher) awaitApproval(c *call) bool {
	now := time.Now()
	wait := min(c.approvalWait, c.deadline.Sub(now))
	info := PendingApproval{RequestID: c.RequestID, Tool: c.name, Command: c.command, Args: c.Args, Requested: now, Expires: now.Add(wait)}
	d.log.Info().Str(fieldTool, c.name).Str(fieldRequestID, c.RequestID).Dur("wait", wait).
		Msg("call awaits the owner's approval (vcpnode approvals)")
	decision, err := d.approvals.await(c.ctx, info, wait)
	c.approval = decision

	d.mu.Lock()
	c.awaiting = false
	if err == nil && c.ctx.Err() == nil {
		if d.canRunLocked(c.name, c.toolMax) || len(d.queue) < d.lim.Queue {
			d.queue = append(d.queue, c)
			d.pumpLocked()
			d.mu.Unlock()
			return true
		}
		err = fmt.Errorf("%w: %d calls running and %d queued; try again later", ErrBusy, d.running, len(d.queue))
	}
	d.releaseLocked(c)
	d.mu.Unlock()

	var o Outcome
	if err != nil && !errors.Is(err, errApprovalInterrupted) {
		o = d.failed(c, err)
	} else {
		o = d.interrupted(c)
	}
	waited := time.Since(c.accepted)
	d.logDone(c.name, c.Call, o, waited, waited, c.approval)
	c.reply(o)
	return false
}
