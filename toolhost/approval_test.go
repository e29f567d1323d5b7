package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testlog"
)

// askPolicy puts every named tool under approval = mode.
func askPolicy(mode ApprovalMode, wait time.Duration, names ...string) Policy {
	p := Policy{Tools: map[string]ToolOverride{}}
	for _, n := range names {
		p.Tools[n] = ToolOverride{Approval: mode, ApprovalTimeout: wait}
	}
	return p
}

// waitPending waits, on the broker's change channel, until n calls are pending.
func waitPending(tb testing.TB, a *Approvals, n int) []PendingApproval {
	tb.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := a.Changes()
		if p := a.Pending(); len(p) == n {
			return p
		}
		select {
		case <-changed:
		case <-deadline:
			tb.Fatalf("never %d pending approvals; have %+v", n, a.Pending())
			return nil
		}
	}
}

// records collects what an observer sees.
type records struct {
	mu  sync.Mutex
	all []CallRecord
}

func (r *records) add(rec CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rec)
}

func (r *records) byID(id string) (CallRecord, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.all {
		if rec.RequestID == id {
			return rec, true
		}
	}
	return CallRecord{}, false
}

func TestApprovalDecisions(t *testing.T) {
	tests := []struct {
		name     string
		decide   func(*Approvals, string) error
		wait     time.Duration
		want     string // "" means the tool ran
		sentinel error
		decision ApprovalDecision
		outcome  string
	}{
		{"approved", func(a *Approvals, id string) error { _, err := a.Decide(id, true, ""); return err },
			time.Minute, "", nil, DecisionApproved, "ok"},
		{"denied with a reason", func(a *Approvals, id string) error {
			_, err := a.Decide(id, false, "  not\tnow\n ")
			return err
		}, time.Minute, `tool "T" denied by the node's owner: not now`, ErrDenied, DecisionDenied, "denied"},
		{"denied without a reason", func(a *Approvals, id string) error { _, err := a.Decide(id, false, ""); return err },
			time.Minute, `tool "T" denied by the node's owner`, ErrDenied, DecisionDenied, "denied"},
		{"nobody answers", nil, 30 * time.Millisecond,
			`tool "T" not approved within 30ms by the node's owner`, ErrNotApproved, DecisionExpired, "not_approved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := newFuncTool("T", func(context.Context, Call) (any, error) { return "ran", nil })
			logs := &testlog.Buffer{}
			d := newLoggedDispatcher(t, askPolicy(ApprovalAsk, tt.wait, "T"), Limits{}, logs, tool)
			var recs records
			d.Observe(recs.add)
			r := newReplies()
			args := map[string]json.RawMessage{"path": json.RawMessage(`"/etc/secret-value"`)}
			if !d.Dispatch(context.Background(), "T", Call{RequestID: "r1", Args: args}, r.reply) {
				t.Fatal("Dispatch refused the call")
			}
			id := "1" // a fresh broker's first approval
			// Held, listed and not queued until decided. Not looked at when
			// nobody answers: its 30 ms may be over before a loaded machine looks.
			if tt.decide != nil {
				p := waitPending(t, d.Approvals(), 1)[0]
				if p.ID != id || p.RequestID != "r1" || p.Tool != "T" || string(p.Args["path"]) != `"/etc/secret-value"` || !p.Expires.After(p.Requested) {
					t.Errorf("pending = %+v", p)
				}
				if in := d.InFlight(); len(in) != 1 || !in[0].AwaitingApproval || in[0].Queued {
					t.Errorf("InFlight = %+v, want one call awaiting approval and not queued", in)
				}
				r.none(t)
				if err := tt.decide(d.Approvals(), p.ID); err != nil {
					t.Fatal(err)
				}
			}
			o := r.next(t)
			if tt.want == "" {
				wantText(t, o, "r1", "ran")
			} else {
				wantErr(t, o, "r1", tt.want, tt.sentinel)
			}
			if n := d.Approvals().Len(); n != 0 {
				t.Errorf("%d approvals still pending", n)
			}
			rec, ok := recs.byID("r1")
			if !ok || rec.Approval != tt.decision || rec.Outcome != tt.outcome || rec.Tool != "T" || rec.Local {
				t.Errorf("record = %+v, want approval %q outcome %q", rec, tt.decision, tt.outcome)
			}
			log := logs.String()
			if !strings.Contains(log, `"approval":"`+string(tt.decision)+`"`) || !strings.Contains(log, "awaits the owner's approval") {
				t.Errorf("log lacks the approval decision %q:\n%s", tt.decision, log)
			}
			if strings.Contains(log, "secret-value") {
				t.Errorf("an argument value reached the info log:\n%s", log)
			}
			if _, err := d.Approvals().Decide(id, true, ""); !errors.Is(err, ErrNoSuchApproval) {
				t.Errorf("second Decide = %v, want ErrNoSuchApproval", err)
			}
		})
	}
}

func TestApprovalDenyModeAndLocalCalls(t *testing.T) {
	tool := newFuncTool("T", func(context.Context, Call) (any, error) { return "ran", nil })
	for _, mode := range []ApprovalMode{ApprovalDeny, ApprovalAsk} {
		t.Run(string(mode), func(t *testing.T) {
			d := newTestDispatcher(t, askPolicy(mode, time.Minute, "T"), Limits{}, tool)
			var recs records
			d.Observe(recs.add)
			r := newReplies()
			// The owner's own call is never held or refused.
			if !d.Dispatch(context.Background(), "T", Call{RequestID: "local", Local: true}, r.reply) {
				t.Fatal("Dispatch refused the local call")
			}
			wantText(t, r.next(t), "local", "ran")
			if rec, _ := recs.byID("local"); rec.Approval != DecisionLocal || !rec.Local {
				t.Errorf("local record = %+v, want approval local", rec)
			}
			if mode != ApprovalDeny {
				return
			}
			dispatch(t, d, "T", "remote", r)
			wantErr(t, r.next(t), "remote", `tool "T" refused by the node's owner`, ErrRefused)
			if rec, _ := recs.byID("remote"); rec.Approval != DecisionRefused || rec.Outcome != "refused" {
				t.Errorf("remote record = %+v, want refused", rec)
			}
			if n := d.Approvals().Len(); n != 0 {
				t.Errorf("a denied tool left %d pending approvals", n)
			}
		})
	}
}

func TestApprovalWaitEndsWithTheCall(t *testing.T) {
	tests := []struct {
		name     string
		end      func(*Dispatcher)
		want     string
		sentinel error
	}{
		{"cancel_tool", func(d *Dispatcher) { d.Cancel("r1") }, "cancelled by the server", ErrCancelled},
		{"shutdown", func(d *Dispatcher) {
			// Shutdown must not wait out the grace period for the owner.
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := d.Shutdown(ctx); err != nil {
				panic(fmt.Sprintf("shutdown: %v", err))
			}
		}, "node is shutting down", ErrShuttingDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			invoked := make(chan struct{}, 1)
			tool := newFuncTool("T", func(context.Context, Call) (any, error) { invoked <- struct{}{}; return "ran", nil })
			d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Hour, "T"), Limits{}, tool)
			r := newReplies()
			dispatch(t, d, "T", "r1", r)
			waitPending(t, d.Approvals(), 1)
			tt.end(d)
			wantErr(t, r.next(t), "r1", tt.want, tt.sentinel)
			waitPending(t, d.Approvals(), 0)
			select {
			case <-invoked:
				t.Error("the tool ran without approval")
			default:
			}
		})
	}
}

func TestApprovalWaitIsBoundedByTheDeadline(t *testing.T) {
	tool := newFuncTool("T", func(context.Context, Call) (any, error) { return "ran", nil })
	tool.spec.Timeout = time.Second // the node's own deadline is 900ms
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Hour, "T"), Limits{}, tool)
	r := newReplies()
	dispatch(t, d, "T", "r1", r)
	// Not looked at while pending: its 900 ms may be over before a loaded
	// machine looks. The answer says how long it waited.
	o := r.next(t)
	if !errors.Is(o.Cause, ErrNotApproved) || !strings.HasPrefix(o.Err, `tool "T" not approved within `) {
		t.Fatalf("outcome %+v, want not approved", o)
	}
	waited := strings.TrimSuffix(strings.TrimPrefix(o.Err, `tool "T" not approved within `), " by the node's owner")
	if w, err := time.ParseDuration(waited); err != nil || w > time.Second {
		t.Errorf("approval waited %q, longer than the call's deadline", waited)
	}
}

func TestApprovedCallStillObeysTheLimits(t *testing.T) {
	hold := newGateTool("Hold")
	ask := newFuncTool("T", func(context.Context, Call) (any, error) { return "ran", nil })
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Minute, "T"), Limits{MaxConcurrent: 1, Queue: -1}, hold, ask)
	r := newReplies()
	dispatch(t, d, "Hold", "h1", r)
	g := hold.next(t)
	// Held for approval, the call takes no place: the node is full, yet it is accepted.
	dispatch(t, d, "T", "t1", r)
	p := waitPending(t, d.Approvals(), 1)[0]
	if _, err := d.Approvals().Decide(p.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	wantErr(t, r.next(t), "t1", "node busy: 1 calls running and 0 queued; try again later", ErrBusy)
	g.finish("done", nil)
	wantText(t, r.next(t), "h1", "done")
}

func TestApprovalPendingIsBounded(t *testing.T) {
	tool := newFuncTool("T", func(context.Context, Call) (any, error) { return "ran", nil })
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Hour, "T"), Limits{}, tool)
	r := newReplies()
	for i := range maxPendingApprovals {
		dispatch(t, d, "T", fmt.Sprintf("r%d", i), r)
	}
	pending := waitPending(t, d.Approvals(), maxPendingApprovals)
	dispatch(t, d, "T", "one-too-many", r)
	o := r.next(t)
	if o.RequestID != "one-too-many" || !errors.Is(o.Cause, ErrBusy) {
		t.Fatalf("outcome %+v, want busy", o)
	}
	for _, p := range pending {
		if _, err := d.Approvals().Decide(p.ID, false, "bulk"); err != nil {
			t.Fatal(err)
		}
	}
	for range pending {
		if o := r.next(t); !errors.Is(o.Cause, ErrDenied) {
			t.Fatalf("outcome %+v, want denied", o)
		}
	}
}

func TestPolicyApprovalDefaults(t *testing.T) {
	p := Policy{Tools: map[string]ToolOverride{"A": {Approval: ApprovalAsk}, "B": {ApprovalTimeout: time.Second}, "C": {Approval: ApprovalAuto}}}
	tests := []struct {
		tool string
		own  ApprovalMode // the tool's default (Spec.Approval)
		mode ApprovalMode
		wait time.Duration
	}{
		{"A", "", ApprovalAsk, DefaultApprovalTimeout},
		{"B", "", ApprovalAuto, time.Second},
		{"none", "", ApprovalAuto, DefaultApprovalTimeout},
		{"B", ApprovalAsk, ApprovalAsk, time.Second},             // the tool's default applies when the config sets none
		{"C", ApprovalAsk, ApprovalAuto, DefaultApprovalTimeout}, // the config's wins
	}
	for _, tt := range tests {
		if mode, wait := p.Approval(Spec{Name: tt.tool, Approval: tt.own}); mode != tt.mode || wait != tt.wait {
			t.Errorf("Approval(%s) = %s, %s; want %s, %s", tt.tool, mode, wait, tt.mode, tt.wait)
		}
	}
}

func TestCleanReason(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct{ in, want string }{
		{"  fine  ", "fine"},
		{"a\x00b\nc", "a b c"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{long, strings.Repeat("é", (maxReasonBytes-len("…"))/2) + "…"}, // cut on a rune boundary
	}
	for _, tt := range tests {
		if got := cleanReason(tt.in); got != tt.want {
			t.Errorf("cleanReason(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
