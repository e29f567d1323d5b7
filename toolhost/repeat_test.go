package toolhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
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
		"You are repeating yourself: use the results you already have, change the arguments, or stop calling it; "+
		"to wait for something to finish, call it at most once every 30m with the same arguments", ErrRepeated)
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

// The guard compares arguments without copying them: a call with a large
// argument allocates next to nothing here, however large the argument.
func TestLoopGuardCopiesNoArgument(t *testing.T) {
	big := json.RawMessage(`"` + strings.Repeat(`a line, \"quoted\" `, 10<<20/20) + `"`)
	if !json.Valid(big) {
		t.Fatal("the argument is not JSON")
	}
	args := map[string]json.RawMessage{"content": big, "path": json.RawMessage(`"/tmp/x"`)}
	pol := Policy{RepeatLimit: 10, RepeatWindow: time.Minute}
	d := &Dispatcher{}
	now := time.Now()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d.mu.Lock()
	err := d.repeatedLocked(&pol, "WriteFile", args, now)
	d.mu.Unlock()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Errorf("checking a call with a 10 MiB argument allocated %d bytes", grew)
	}
}

// What counts as the same arguments: the key order and the white space
// between JSON tokens do not; a byte inside a string, or which key a
// value belongs to, does.
func TestLoopGuardSameArguments(t *testing.T) {
	raw := func(kv ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = json.RawMessage(kv[i+1])
		}
		return m
	}
	same := [][2]map[string]json.RawMessage{
		{raw("a", `{"x": [1, 2]}`, "b", `"s"`), raw("b", `"s"`, "a", "{\"x\":[1,\n2]}")},
		{raw("a", ` "v" `), raw("a", `"v"`)},
	}
	for _, p := range same {
		if argsKey(p[0]) != argsKey(p[1]) {
			t.Errorf("%s and %s count as different", p[0], p[1])
		}
	}
	different := [][2]map[string]json.RawMessage{
		{raw("a", `"x y"`), raw("a", `"xy"`)},
		{raw("a", `"q\" z"`), raw("a", `"q\"z"`)},
		{raw("ab", `"c"`), raw("a", `"bc"`)},
		{raw("a", `1`, "b", `2`), raw("a", `2`, "b", `1`)},
		{raw("a", `"x"`), raw("a", `"x"`, "b", `null`)},
	}
	for _, p := range different {
		if argsKey(p[0]) == argsKey(p[1]) {
			t.Errorf("%s and %s count as the same", p[0], p[1])
		}
	}
}

// A model polling a status tool with the same arguments is refused at the
// default limit only when it polls faster than the error tells it to; the
// owner's log names the setting that allows a tool polled on purpose.
func TestLoopGuardPolling(t *testing.T) {
	var log bytes.Buffer
	pol := Policy{RepeatLimit: 10, RepeatWindow: time.Minute}
	d := newLoggedDispatcher(t, pol, Limits{}, &log)
	args := map[string]json.RawMessage{"taskId": json.RawMessage(`"t-1"`)}
	poll := func(at time.Time) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.repeatedLocked(&pol, "Status", args, at)
	}
	start := time.Now()
	var err error
	for i := range 11 { // every 5 s: the eleventh call is refused
		if err = poll(start.Add(time.Duration(i) * 5 * time.Second)); err != nil && i < 10 {
			t.Fatalf("call %d refused: %v", i+1, err)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "call it at most once every 6s with the same arguments") {
		t.Fatalf("the eleventh call in 50s: %v, want the interval to poll at", err)
	}
	for _, want := range []string{`"tool":"Status"`, "needs a higher [tools.Status] repeat_limit (0: no guard for it)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	// Polled as the error says, the calls go through for good.
	start = start.Add(time.Hour)
	for i := range 30 {
		if err := poll(start.Add(time.Duration(i) * 6 * time.Second)); err != nil {
			t.Fatalf("poll %d at the interval the error gave: %v", i+1, err)
		}
	}
}
