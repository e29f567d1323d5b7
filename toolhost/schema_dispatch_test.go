package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// typedTool records the arguments Invoke received.
type typedTool struct {
	got chan map[string]json.RawMessage
}

func (typedTool) Spec() Spec {
	s := resizeSpec()
	s.DistributedExposed = true
	return s
}

func (t typedTool) Invoke(_ context.Context, c Call) (any, error) {
	t.got <- c.Args
	return "ok", nil
}

// A wrong call of a typed tool is answered at once, without asking the
// owner and without running the tool; a right one is coerced, approved and run.
func TestDispatcherChecksTypedArgsBeforeApproval(t *testing.T) {
	tool := typedTool{got: make(chan map[string]json.RawMessage, 1)}
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, waitLimit, "Resize"), Limits{}, tool)
	var recs records
	d.Observe(recs.add)
	r := newReplies()
	if !d.Dispatch(context.Background(), "Resize", Call{RequestID: "bad", Args: kv("width", `"wide"`)}, r.reply) {
		t.Fatal("refused")
	}
	o := r.next(t)
	var ae *ArgsError
	if !errors.As(o.Cause, &ae) || len(ae.Problems) != 2 || o.Err != ae.Error() {
		t.Fatalf("outcome %+v", o)
	}
	if p := d.Approvals().Pending(); len(p) != 0 {
		t.Fatalf("a wrong call was held for the owner: %+v", p)
	}
	if rec, ok := recs.byID("bad"); !ok || rec.Outcome != "bad_args" {
		t.Fatalf("call record %+v", rec)
	}
	if len(d.InFlight()) != 0 {
		t.Fatalf("in flight after the answer: %+v", d.InFlight())
	}

	if !d.Dispatch(context.Background(), "Resize", Call{RequestID: "good", Args: kv("path", `"a.png"`, "width", `"64"`)}, r.reply) {
		t.Fatal("refused")
	}
	p := waitPending(t, d.Approvals(), 1)
	if string(p[0].Args["width"]) != "64" {
		t.Errorf("the owner is shown %s, not the coerced value", p[0].Args["width"])
	}
	if _, err := d.Approvals().Decide(p[0].ID, true, ""); err != nil {
		t.Fatal(err)
	}
	wantText(t, r.next(t), "good", "ok")
	if got := <-tool.got; string(got["width"]) != "64" || string(got["mode"]) != `"fit"` {
		t.Errorf("Invoke got %v", got)
	}
}
