package hubsession

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// holdReply makes the dispatcher's reply to requestID wait (observers run
// after the "call finished" line and before the reply) until release is
// closed; reached is closed when it got there.
func holdReply(d *toolhost.Dispatcher, requestID string) (reached, release chan struct{}) {
	reached, release = make(chan struct{}), make(chan struct{})
	d.Observe(func(rec toolhost.CallRecord) {
		if rec.RequestID == requestID {
			close(reached)
			<-release
		}
	})
	return reached, release
}

// waitCloseOrLog waits until the hub's connection has ended (the node's
// close frame arrived) or the node's log says substr.
func (h *harness) waitCloseOrLog(c *demohub.Conn, substr string) {
	h.t.Helper()
	closedOrSaid := func() bool {
		select {
		case <-c.Done():
			return true
		default:
			return strings.Contains(h.logs.String(), substr)
		}
	}
	if !testwait.Poll(h.ctx, closedOrSaid) {
		h.t.Fatalf("neither a close frame nor %q in the log:\n%s", substr, h.logs.String())
	}
}

// resultBeforeClose checks that the hub received a tool_result for
// requestID (an error containing wantErr, or a success when wantErr is
// empty) and that the connection then ended with a close frame.
func resultBeforeClose(t *testing.T, h *harness, c *demohub.Conn, requestID, wantErr string) {
	t.Helper()
	select {
	case <-c.Done():
	case <-h.ctx.Done():
		t.Fatal("the connection was never closed")
	}
	var found bool
	for _, f := range c.Received() {
		if r, ok := f.Msg.(wsproto.ToolResult); ok && r.RequestID == requestID {
			found = true
			if wantErr == "" && r.Status != wsproto.StatusSuccess {
				t.Errorf("result for %s = %+v, want a success", requestID, r)
			}
			if wantErr != "" && (r.Status != wsproto.StatusError || !strings.Contains(r.Error, wantErr)) {
				t.Errorf("result for %s = %+v, want an error saying %q", requestID, r, wantErr)
			}
		}
	}
	if !found {
		t.Errorf("call %s was read before the close frame but never answered; log:\n%s", requestID, h.logs.String())
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "1001") {
		t.Errorf("connection ended with %v, want a 1001 close frame", err)
	}
}

// A call read after the drain ended but before the close frame still gets
// its "node is shutting down" answer before the close frame.
func TestShutdownAnswersCallsReadBeforeTheCloseFrame(t *testing.T) {
	closing, proceed := make(chan struct{}), make(chan struct{})
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.BeforeClose = func() { close(closing); <-proceed }
	}})
	reached, release := holdReply(h.host.disp, "late")
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.stop()
	select {
	case <-closing: // drained: the session is about to close
	case <-h.ctx.Done():
		t.Fatal("the session never began closing")
	}
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "late", ToolName: "Echo"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached: // read and refused; its reply is held
	case <-h.ctx.Done():
		t.Fatal("the call was never read")
	}
	close(proceed)
	h.waitCloseOrLog(c, "answering the calls already read")
	close(release)
	resultBeforeClose(t, h, c, "late", "node is shutting down")
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

// A reconnect asked by a reload answers the calls already read (here one
// whose reply is still being made) before its close frame.
func TestRestartAnswersCallsReadBeforeTheCloseFrame(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	reached, release := holdReply(h.host.disp, "busy")
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.waitState("connected", func(s connState) bool { return s.Phase == controlapi.PhaseConnected })
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "busy", ToolName: "Echo"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-h.ctx.Done():
		t.Fatal("the call was never run")
	}
	h.engine.Restart()
	h.waitCloseOrLog(c, "answering the calls already read")
	close(release)
	resultBeforeClose(t, h, c, "busy", "")
	h.accept() // and it reconnects
}

// Calls still running when their connection ends are cancelled after the
// session's grace period, and the log says how many.
func TestCallsOfAnEndedConnectionAreCancelled(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, timings: func(tm *Timings) {
		tm.SessionCallGrace = 50 * time.Millisecond
	}})
	c := h.accept()
	for _, id := range []string{"a", "b"} {
		if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: id, ToolName: "Gate"}); err != nil {
			t.Fatal(err)
		}
		h.waitStarted(gate, id)
	}
	c.Drop()
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case id := <-gate.Cancelled:
			got[id] = true
		case <-h.ctx.Done():
			t.Fatalf("calls of the dropped connection were not cancelled (cancelled: %v)", got)
		}
	}
	h.waitLog(`"calls":2`)
	h.waitLog("cancelled the calls of an ended connection")
	h.waitInFlight(0)
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

// A call that finishes within the grace is not cancelled; its result has
// no connection left to go to, and the log says so.
func TestCallOfAnEndedConnectionMayFinishWithinTheGrace(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, timings: func(tm *Timings) {
		tm.SessionCallGrace = time.Hour
	}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "slow", ToolName: "Gate"}); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "slow")
	c.Drop()
	h.waitLog("connection ended with calls still running")
	close(gate.Release)
	h.waitLog("result dropped")
	h.waitInFlight(0)
	select {
	case id := <-gate.Cancelled:
		t.Fatalf("call %s was cancelled although it finished within the grace", id)
	default:
	}
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}
