package toolhost

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// The loop guard: the same tool with the same arguments is refused past
// the limit within the window, naming the repetition; other arguments,
// the owner's own calls and a tool with its own limit 0 are not; once the
// window has passed, the call goes through again.
func TestLoopGuard(t *testing.T) {
	off := 0
	pol := Policy{RepeatLimit: 2, RepeatWindow: time.Hour, Tools: map[string]ToolOverride{"Free": {RepeatLimit: &off}}}
	d := newTestDispatcher(t, pol, Limits{}, newFuncTool("T", func(context.Context, Call) (any, error) { return "ok", nil }),
		newFuncTool("Free", func(context.Context, Call) (any, error) { return "ok", nil }))
	var recs records
	d.Observe(recs.add)
	r := newReplies()
	same := map[string]json.RawMessage{"q": json.RawMessage(`"x"`), "n": json.RawMessage(`1`)}
	reordered := map[string]json.RawMessage{"n": json.RawMessage(`1`), "q": json.RawMessage(`"x"`)}
	call := func(tool, id string, args map[string]json.RawMessage, local bool) Outcome {
		t.Helper()
		if !d.Dispatch(context.Background(), tool, Call{RequestID: id, Args: args, Local: local}, r.reply) {
			t.Fatalf("Dispatch(%s) refused", id)
		}
		return r.next(t)
	}
	wantText(t, call("T", "1", same, false), "1", "ok")
	wantText(t, call("T", "2", reordered, false), "2", "ok")
	o := call("T", "3", same, false)
	wantErr(t, o, "3", "repeated call: T was already called with these same arguments 2 times in the last 1h. "+
		"You are repeating yourself: use the results you already have, change the arguments, or stop calling it", ErrRepeated)
	if OutcomeKind(o) != "repeated" {
		t.Errorf("outcome %q: %s", OutcomeKind(o), o.Err)
	}
	wantText(t, call("T", "4", map[string]json.RawMessage{"q": json.RawMessage(`"y"`)}, false), "4", "ok")
	wantText(t, call("T", "5", same, true), "5", "ok") // the owner's own
	for i := range 4 {
		id := fmt.Sprint("f", i)
		wantText(t, call("Free", id, same, false), id, "ok")
	}
	if rec, _ := recs.byID("3"); rec.Outcome != "repeated" {
		t.Errorf("record %+v", rec)
	}

	// An hour later the window has passed.
	d.mu.Lock()
	err := d.repeatedLocked(&pol, "T", same, time.Now().Add(time.Hour+time.Second))
	d.mu.Unlock()
	if err != nil {
		t.Errorf("after the window: %v", err)
	}
}
