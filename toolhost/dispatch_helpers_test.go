package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// waitLimit bounds every wait in these tests; reaching it is a failure, not
// a synchronisation step.
const waitLimit = 30 * time.Second

// gateTool blocks every call until the test answers it through the gate it
// publishes on entered.
type gateTool struct {
	spec      Spec
	entered   chan *gate
	ignoreCtx bool // keep waiting for the gate after ctx ends, like a misbehaving tool
}

type gate struct {
	id   string
	ctx  context.Context
	done chan invocation
}

func (g *gate) finish(v any, err error) { g.done <- invocation{value: v, err: err} }

func newGateTool(name string) *gateTool {
	return &gateTool{
		spec:    Spec{Name: name, DistributedExposed: true, Source: "test"},
		entered: make(chan *gate, 128),
	}
}

func (t *gateTool) Spec() Spec { return t.spec }

func (t *gateTool) Invoke(ctx context.Context, call Call) (any, error) {
	g := &gate{id: call.RequestID, ctx: ctx, done: make(chan invocation, 1)}
	t.entered <- g
	if t.ignoreCtx {
		r := <-g.done
		return r.value, r.err
	}
	select {
	case r := <-g.done:
		return r.value, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next waits for the next call to enter the tool.
func (t *gateTool) next(tb testing.TB) *gate {
	tb.Helper()
	select {
	case g := <-t.entered:
		return g
	case <-time.After(waitLimit):
		tb.Fatalf("no call entered %s", t.spec.Name)
		return nil
	}
}

// noneEntered checks that no call is inside the tool right now.
func (t *gateTool) noneEntered(tb testing.TB) {
	tb.Helper()
	select {
	case g := <-t.entered:
		tb.Fatalf("call %s entered %s, want it held back", g.id, t.spec.Name)
	default:
	}
}

// funcTool runs fn for every call.
type funcTool struct {
	spec Spec
	fn   func(context.Context, Call) (any, error)
}

func (t funcTool) Spec() Spec                                      { return t.spec }
func (t funcTool) Invoke(ctx context.Context, c Call) (any, error) { return t.fn(ctx, c) }

func newFuncTool(name string, fn func(context.Context, Call) (any, error)) funcTool {
	return funcTool{spec: Spec{Name: name, DistributedExposed: true, Source: "test"}, fn: fn}
}

// replies collects outcomes and counts replies per requestId.
type replies struct {
	ch chan Outcome
}

func newReplies() *replies { return &replies{ch: make(chan Outcome, 256)} }

func (r *replies) reply(o Outcome) { r.ch <- o }

func (r *replies) next(tb testing.TB) Outcome {
	tb.Helper()
	select {
	case o := <-r.ch:
		return o
	case <-time.After(waitLimit):
		tb.Fatal("no reply")
		return Outcome{}
	}
}

// none checks that no reply is waiting.
func (r *replies) none(tb testing.TB) {
	tb.Helper()
	select {
	case o := <-r.ch:
		tb.Fatalf("unexpected reply %+v", o)
	default:
	}
}

func newTestDispatcher(tb testing.TB, pol Policy, lim Limits, tools ...Tool) *Dispatcher {
	tb.Helper()
	return newLoggedDispatcher(tb, pol, lim, io.Discard, tools...)
}

func newLoggedDispatcher(tb testing.TB, pol Policy, lim Limits, w io.Writer, tools ...Tool) *Dispatcher {
	tb.Helper()
	reg := NewRegistry()
	for _, t := range tools {
		if err := reg.Add(t); err != nil {
			tb.Fatal(err)
		}
	}
	d := NewDispatcher(reg, pol, lim, zerolog.New(w))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := d.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown at cleanup: %v", err)
		}
	})
	return d
}

func dispatch(tb testing.TB, d *Dispatcher, tool, id string, r *replies) {
	tb.Helper()
	if !d.Dispatch(context.Background(), tool, Call{RequestID: id}, r.reply) {
		tb.Fatalf("Dispatch(%s, %s) refused the call", tool, id)
	}
}

func wantErr(tb testing.TB, o Outcome, id, text string, sentinel error) {
	tb.Helper()
	if o.RequestID != id || o.Err != text {
		tb.Fatalf("outcome %s: err %q, want %s: %q", o.RequestID, o.Err, id, text)
	}
	if o.Result != nil {
		tb.Fatalf("error outcome carries a result: %s", o.Result)
	}
	if sentinel != nil && !errors.Is(o.Cause, sentinel) {
		tb.Fatalf("cause %v is not %v", o.Cause, sentinel)
	}
}

func wantText(tb testing.TB, o Outcome, id, text string) {
	tb.Helper()
	want, _ := json.Marshal(TextResult(text))
	if o.RequestID != id || o.Err != "" || string(o.Result) != string(want) {
		tb.Fatalf("outcome %s: result %s err %q, want %s: %s", o.RequestID, o.Result, o.Err, id, want)
	}
}

// waitState polls the dispatcher's in-flight list until cond holds.
func waitState(tb testing.TB, d *Dispatcher, what string, cond func([]InFlightCall) bool) {
	tb.Helper()
	testwait.For(tb, what, func() bool { return cond(d.InFlight()) })
}

func queuedIDs(calls []InFlightCall) []string {
	var ids []string
	for _, c := range calls {
		if c.Queued {
			ids = append(ids, c.RequestID)
		}
	}
	return ids
}
