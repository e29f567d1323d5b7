package hubsession

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// sizeTool answers with the byte length of its "blob" argument.
type sizeTool struct{}

func (sizeTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Size", Description: "measures its blob argument", Timeout: time.Minute, Builtin: true}
}

func (sizeTool) Invoke(_ context.Context, call toolhost.Call) (any, error) {
	return strconv.Itoa(len(call.Args["blob"])), nil
}

func blobCall(id string, n int) wsproto.ExecuteTool {
	// One buffer, filled by copying: under -race every byte a Go loop
	// touches costs a check, and a fresh 50 MiB costs its page faults.
	blob := bytes.Repeat([]byte{'x'}, n+2)
	blob[0], blob[n+1] = '"', '"'
	return wsproto.ExecuteTool{RequestID: id, ToolName: "Size", ToolArgs: map[string]json.RawMessage{"blob": blob}}
}

// A 50 MiB execute_tool does not cost the connection: while its decode is
// held (as a slow decode on a loaded machine would be), the node's reader
// still answers the hub's pings and its 1 s pings still go out and get
// their pongs; once released, the call is answered on the same connection.
// Liveness is proved by those round trips happening during the decode, not
// by the scheduler meeting a window: the pong timeout is generous so that a
// stalled test process cannot end the connection, while the ping interval
// stays short so that pings do flow during the transfer and the decode.
// Nor is the test's length a requirement: under -race the frame costs
// 11-12 s of CPU (encoding, reading, decoding: docs/performance.md), a
// few minutes at load 30, so every wait runs until the test's own deadline.
func TestLargeFrameKeepsTheConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 50 MiB frame")
	}
	const size = 50 << 20
	decoding := make(chan struct{})
	resume := make(chan struct{})
	ctx, cancel := testwait.Long(t)
	defer cancel()
	deadline, _ := ctx.Deadline()
	h := startHarness(t, harnessOpt{
		patience: time.Until(deadline),
		tools:    []toolhost.Tool{sizeTool{}},
		config: func(c *config.Config) {
			c.Hub.PingInterval = config.Duration(time.Second)
			c.Hub.PongTimeout = config.Duration(time.Minute)
			c.Node.ExposedTools = append(c.Node.ExposedTools, "Size")
		},
		timings: func(tm *Timings) {
			tm.BeforeDecode = func(n int) {
				if n > size {
					close(decoding)
					<-resume
				}
			}
		},
	})
	c := h.accept()
	type result struct {
		res wsproto.ToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := c.CallExecute(ctx, blobCall("big", size))
		done <- result{res, err}
	}()
	released := false
	release := func() {
		if !released {
			released = true
			close(resume)
		}
	}
	defer release() // a failing test must not leave the decoder held

	select {
	case <-decoding:
	case r := <-done:
		t.Fatalf("the call was answered before its frame was decoded: %+v, %v", r.res, r.err)
	case <-ctx.Done():
		t.Fatal("the large frame never reached the decoder")
	}
	// The decode is held: the reader and the pinger must go on regardless.
	pings := c.PingsReceived()
	for i := range 3 {
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("hub ping %d during the decode: %v", i+1, err)
		}
	}
	if err := c.WaitPings(ctx, pings+2); err != nil {
		t.Fatalf("the node stopped pinging during the decode: %v", err)
	}
	select {
	case r := <-done:
		t.Fatalf("the call was answered while its decode was held: %+v, %v", r.res, r.err)
	default:
	}
	release()

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("no result for the large call")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Status != wsproto.StatusSuccess || firstText(t, r.res) != strconv.Itoa(size+2) {
		t.Fatalf("big call: %+v", r.res)
	}
	// Still the first connection, still alive: a ping round trip proves it.
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("connection after the large frame: %v", err)
	}
	if s, _ := h.engine.State(); s.Sessions != 1 {
		t.Errorf("sessions = %d: the large frame cost the connection", s.Sessions)
	}
}

// Frames that do not fit the decode budget in time are answered "node
// busy", never dropped; the connection goes on.
func TestFrameOverTheDecodeBudgetIsAnsweredBusy(t *testing.T) {
	h := startHarness(t, harnessOpt{
		tools: []toolhost.Tool{sizeTool{}},
		config: func(c *config.Config) {
			c.Node.ExposedTools = append(c.Node.ExposedTools, "Size")
		},
		timings: func(tm *Timings) {
			tm.DecodeBudget = 8 * config.KiB
			tm.BusyWait = 20 * time.Millisecond
		},
	})
	c := h.accept()
	res, err := c.CallExecute(h.ctx, blobCall("too-big", 20*config.KiB))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "node busy") {
		t.Fatalf("over-budget call: %+v", res)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "small"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("small call after a busy refusal: %+v", res)
	}
	h.waitLog("node busy decoding earlier frames")
}

// refusedBusy sends frame past a small decode budget, so the session
// refuses it as busy, and returns what the bridge was told once a later
// call's round trip shows the refusal is done (frames are handled in order).
func refusedBusy(t *testing.T, frame string) *fakeServerTools {
	t.Helper()
	st := &fakeServerTools{connected: make(chan struct{}, 4), disconnected: make(chan struct{}, 4)}
	h := startHarness(t, harnessOpt{
		bridge: st,
		timings: func(tm *Timings) {
			tm.DecodeBudget = 8 * config.KiB
			tm.BusyWait = 20 * time.Millisecond
		},
	})
	c := h.accept()
	if err := c.SendRaw(h.ctx, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "after"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call after the refused frame: %+v", res)
	}
	h.waitLog("node busy decoding earlier frames")
	return st
}

// A progress frame refused as busy is not lost without a word: the
// bridge is told, so the call following that task learns of it.
func TestProgressFrameRefusedBusyIsCounted(t *testing.T) {
	st := refusedBusy(t, `{"type":"vcp_tool_status","data":{"job_id":"task-1","bridgeType":"log","content":"`+strings.Repeat("p", 20*config.KiB)+`"}}`)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lost != 1 || len(st.lostResults) != 0 {
		t.Fatalf("the bridge was told of %d lost progress frames and lost results %q, want 1 and none", st.lost, st.lostResults)
	}
}

// A server tool's result refused as busy ends the call waiting on it: the
// bridge is told the result's id rather than left to wait for its timeout.
func TestResultFrameRefusedBusyEndsItsCall(t *testing.T) {
	st := refusedBusy(t, `{"type":"vcp_tool_result","data":{"requestId":"call-7","status":"success","result":"`+strings.Repeat("r", 20*config.KiB)+`"}}`)
	st.mu.Lock()
	defer st.mu.Unlock()
	if !slices.Equal(st.lostResults, []string{"call-7"}) || st.lost != 0 {
		t.Fatalf("the bridge was told of lost results %q and %d lost progress frames, want [call-7] and 0", st.lostResults, st.lost)
	}
}

// A flood of garbage frames: every one is survived, but the log gets a few
// lines and a count, not one line each.
func TestGarbageFloodLogsBoundedLines(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	const flood = 500
	for i := range flood {
		if err := c.SendRaw(h.ctx, []byte(fmt.Sprintf("not json %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed execute_tool with a 1 MiB requestId: answered, and the id
	// is not copied into the log whole.
	longID := strings.Repeat("r", 1<<20)
	bad := `{"type":"execute_tool","data":{"requestId":"` + longID + `","toolName":7}}`
	if err := c.SendRaw(h.ctx, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == longID
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusError {
		t.Fatalf("malformed call with a long id: %v", err)
	}
	// Frames are handled in order, so after this round trip all are done.
	if res := h.call(c, "Echo", map[string]any{"text": "still here"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after the flood: %+v", res)
	}
	c.Drop() // the session's end reports what was left out
	h.waitLog("similar warnings were left out of the log")

	logs := h.logs.String()
	if n := strings.Count(logs, "ignored a malformed frame"); n > toolhost.WarnBurst {
		t.Errorf("%d malformed-frame lines for %d frames, want at most %d", n, flood+1, toolhost.WarnBurst)
	}
	if !strings.Contains(logs, fmt.Sprintf(`"suppressed":%d`, flood+1-toolhost.WarnBurst)) {
		t.Errorf("no count of the %d suppressed lines in:\n%s", flood+1-toolhost.WarnBurst, tail(logs, 4000))
	}
	for _, line := range strings.Split(logs, "\n") {
		if len(line) > 4*config.KiB {
			t.Errorf("a log line of %d bytes: %.200s…", len(line), line)
		}
	}
	if strings.Count(logs, strings.Repeat("r", humantext.WireLogBytes+1)) != 0 {
		t.Error("a request id longer than the clip length reached the log")
	}
}
