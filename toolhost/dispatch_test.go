package toolhost

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

func TestDispatchConcurrencyLimitQueueAndBusy(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 2, Queue: 1}, tool)
	r := newReplies()

	dispatch(t, d, "Work", "r1", r)
	dispatch(t, d, "Work", "r2", r)
	g1, g2 := tool.next(t), tool.next(t)
	dispatch(t, d, "Work", "r3", r) // takes the only queue place
	tool.noneEntered(t)
	if q := queuedIDs(d.InFlight()); len(q) != 1 || q[0] != "r3" {
		t.Fatalf("queued = %v, want [r3]", q)
	}

	dispatch(t, d, "Work", "r4", r)
	wantErr(t, r.next(t), "r4", "node busy: 2 calls running and 1 queued; try again later", ErrBusy)

	g1.finish("one", nil)
	wantText(t, r.next(t), g1.id, "one")
	g3 := tool.next(t) // the queued call got the freed slot
	if g3.id != "r3" {
		t.Fatalf("call %s entered, want r3", g3.id)
	}
	g2.finish("two", nil)
	g3.finish("three", nil)
	got := map[string]bool{}
	for range 2 {
		got[r.next(t).RequestID] = true
	}
	if !got[g2.id] || !got["r3"] {
		t.Fatalf("replies %v, want %s and r3", got, g2.id)
	}
	waitState(t, d, "no calls", func(c []InFlightCall) bool { return len(c) == 0 })
	r.none(t)
}

func TestDispatchNoQueue(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1, Queue: -1}, tool)
	r := newReplies()
	dispatch(t, d, "Work", "r1", r)
	g := tool.next(t)
	dispatch(t, d, "Work", "r2", r)
	wantErr(t, r.next(t), "r2", "node busy: 1 calls running and 0 queued; try again later", ErrBusy)
	g.finish("done", nil)
	wantText(t, r.next(t), "r1", "done")
}

func TestDispatchPerToolLimit(t *testing.T) {
	a, b := newGateTool("A"), newGateTool("B")
	pol := Policy{Tools: map[string]ToolOverride{"A": {MaxConcurrent: 1}}}
	d := newTestDispatcher(t, pol, Limits{MaxConcurrent: 4, Queue: 4}, a, b)
	r := newReplies()

	dispatch(t, d, "A", "a1", r)
	ga1 := a.next(t)
	dispatch(t, d, "A", "a2", r)
	a.noneEntered(t)
	if q := queuedIDs(d.InFlight()); len(q) != 1 || q[0] != "a2" {
		t.Fatalf("queued = %v, want [a2]", q)
	}
	// A call of another tool is not stuck behind a2.
	dispatch(t, d, "B", "b1", r)
	gb1 := b.next(t)

	ga1.finish("a1", nil)
	wantText(t, r.next(t), "a1", "a1")
	ga2 := a.next(t)
	ga2.finish("a2", nil)
	wantText(t, r.next(t), "a2", "a2")
	gb1.finish("b1", nil)
	wantText(t, r.next(t), "b1", "b1")
}

func TestDispatchPerToolQueueCountsAgainstQueue(t *testing.T) {
	a := newGateTool("A")
	pol := Policy{Tools: map[string]ToolOverride{"A": {MaxConcurrent: 1}}}
	d := newTestDispatcher(t, pol, Limits{MaxConcurrent: 4, Queue: 1}, a)
	r := newReplies()
	dispatch(t, d, "A", "a1", r)
	g := a.next(t)
	dispatch(t, d, "A", "a2", r)
	dispatch(t, d, "A", "a3", r)
	wantErr(t, r.next(t), "a3", "node busy: 1 calls running and 1 queued; try again later", ErrBusy)
	g.finish("x", nil)
	r.next(t)
	a.next(t).finish("y", nil)
	wantText(t, r.next(t), "a2", "y")
}

func TestDispatchDuplicateRequestID(t *testing.T) {
	tool := newGateTool("Work")
	var logs testlog.Buffer
	d := newLoggedDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, &logs, tool)
	r := newReplies()

	dispatch(t, d, "Work", "r1", r)
	dispatch(t, d, "Work", "r2", r) // queued
	g := tool.next(t)
	for _, id := range []string{"r1", "r2"} {
		if d.Dispatch(context.Background(), "Work", Call{RequestID: id}, r.reply) {
			t.Fatalf("duplicate %s accepted", id)
		}
	}
	if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), "duplicate") {
		t.Fatalf("duplicate not logged at warn: %s", logs.String())
	}
	g.finish("first", nil)
	wantText(t, r.next(t), "r1", "first")
	tool.next(t).finish("second", nil)
	wantText(t, r.next(t), "r2", "second")
	waitState(t, d, "no calls", func(c []InFlightCall) bool { return len(c) == 0 })
	r.none(t)

	// Once finished, the id may be used again.
	dispatch(t, d, "Work", "r1", r)
	tool.next(t).finish("again", nil)
	wantText(t, r.next(t), "r1", "again")
}

func TestDispatchEmptyRequestIDIgnored(t *testing.T) {
	d := newTestDispatcher(t, Policy{}, Limits{}, NewEchoTool())
	r := newReplies()
	if d.Dispatch(context.Background(), "Echo", Call{Local: true}, r.reply) {
		t.Fatal("call without requestId accepted")
	}
	r.none(t)
}

func TestCancel(t *testing.T) {
	t.Run("queued", func(t *testing.T) {
		tool := newGateTool("Work")
		d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, tool)
		r := newReplies()
		dispatch(t, d, "Work", "r1", r)
		g := tool.next(t)
		dispatch(t, d, "Work", "r2", r)
		if !d.Cancel("r2") {
			t.Fatal("Cancel(r2) = false for a queued call")
		}
		wantErr(t, r.next(t), "r2", "cancelled by the server", ErrCancelled)
		tool.noneEntered(t)
		g.finish("ok", nil)
		wantText(t, r.next(t), "r1", "ok")
		if d.Cancel("r2") || d.Cancel("never-sent") {
			t.Fatal("Cancel of a finished or unknown call reported true")
		}
	})
	t.Run("running", func(t *testing.T) {
		tool := newGateTool("Work")
		d := newTestDispatcher(t, Policy{}, Limits{}, tool)
		r := newReplies()
		dispatch(t, d, "Work", "r1", r)
		g := tool.next(t)
		if !d.Cancel("r1") {
			t.Fatal("Cancel(r1) = false for a running call")
		}
		<-g.ctx.Done()
		if !errors.Is(context.Cause(g.ctx), ErrCancelled) {
			t.Fatalf("tool context cause %v, want ErrCancelled", context.Cause(g.ctx))
		}
		wantErr(t, r.next(t), "r1", "cancelled by the server", ErrCancelled)
	})
	t.Run("running tool still succeeds", func(t *testing.T) {
		tool := newGateTool("Work")
		tool.ignoreCtx = true
		d := newTestDispatcher(t, Policy{}, Limits{}, tool)
		r := newReplies()
		dispatch(t, d, "Work", "r1", r)
		g := tool.next(t)
		d.Cancel("r1")
		<-g.ctx.Done()
		g.finish("late success", nil)
		wantErr(t, r.next(t), "r1", "cancelled by the server", ErrCancelled)
	})
}

func TestDispatchParentContextCancelled(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{}, tool)
	r := newReplies()
	ctx, cancel := context.WithCancelCause(context.Background())
	if !d.Dispatch(ctx, "Work", Call{RequestID: "r1"}, r.reply) {
		t.Fatal("refused")
	}
	tool.next(t)
	cancel(errors.New("connection closed"))
	wantErr(t, r.next(t), "r1", "call cancelled: connection closed", nil)
}

func TestShutdownWaitsForCalls(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, tool)
	r := newReplies()
	dispatch(t, d, "Work", "r1", r)
	g1 := tool.next(t)
	dispatch(t, d, "Work", "r2", r) // queued: accepted, so it still runs

	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- d.Shutdown(context.Background()) }()
	testwait.For(t, "shutdown began", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.closing
	})
	dispatch(t, d, "Work", "late", r)
	wantErr(t, r.next(t), "late", "node is shutting down", ErrShuttingDown)
	select {
	case err := <-shutdownErr:
		t.Fatalf("Shutdown returned %v with calls in flight", err)
	default:
	}
	g1.finish("one", nil)
	wantText(t, r.next(t), "r1", "one")
	tool.next(t).finish("two", nil)
	wantText(t, r.next(t), "r2", "two")
	select {
	case err := <-shutdownErr:
		if err != nil {
			t.Fatalf("Shutdown = %v, want nil", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Shutdown did not return after the calls finished")
	}
}

func TestShutdownCancelsWhenContextEnds(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, tool)
	r := newReplies()
	dispatch(t, d, "Work", "r1", r)
	g := tool.next(t)
	dispatch(t, d, "Work", "r2", r)

	ctx, cancel := context.WithCancel(context.Background())
	shutdownErr := make(chan error, 1)
	go func() { shutdownErr <- d.Shutdown(ctx) }()
	cancel()
	<-g.ctx.Done()
	err := <-shutdownErr
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled 2 unfinished calls") {
		t.Fatalf("Shutdown = %v, want 2 cancelled calls and context.Canceled", err)
	}
	got := map[string]Outcome{}
	for range 2 {
		o := r.next(t)
		got[o.RequestID] = o
	}
	for _, id := range []string{"r1", "r2"} {
		wantErr(t, got[id], id, "node is shutting down", ErrShuttingDown)
	}
	if n := len(d.InFlight()); n != 0 {
		t.Fatalf("%d calls still in flight after Shutdown returned", n)
	}
}

func TestInFlight(t *testing.T) {
	tool := newGateTool("Work")
	d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, tool)
	r := newReplies()
	dispatch(t, d, "Work", "r1", r)
	g := tool.next(t)
	if !d.Dispatch(context.Background(), "Work", Call{RequestID: "r2", Local: true}, r.reply) {
		t.Fatal("refused")
	}
	calls := d.InFlight()
	if len(calls) != 2 {
		t.Fatalf("InFlight = %+v", calls)
	}
	c1, c2 := calls[0], calls[1]
	if c1.RequestID != "r1" || c1.Tool != "Work" || c1.Queued || c1.Local ||
		c2.RequestID != "r2" || !c2.Queued || !c2.Local {
		t.Fatalf("InFlight = %+v", calls)
	}
	// Default timeout 60s: deadline 57s after acceptance.
	if got := c1.Deadline.Sub(c1.Started); got != 57*time.Second {
		t.Fatalf("deadline %v after start, want 57s", got)
	}
	g.finish("x", nil)
	tool.next(t).finish("y", nil)
	r.next(t)
	r.next(t)
}
