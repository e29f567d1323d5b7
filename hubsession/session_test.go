package hubsession

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestOldServerWithoutAck(t *testing.T) {
	h := startHarness(t, harnessOpt{hubOpts: demohub.Options{NoAck: true}})
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "hi"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call without ack: %+v", res)
	}
	if s, _ := h.engine.State(); s.ServerID != "" {
		t.Errorf("serverId = %q without an ack", s.ServerID)
	}
}

func TestMalformedFramesNeverEndTheSession(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	for _, raw := range []string{
		`not json`,
		`[1,2,3]`,
		`{"type":"execute_tool"}`,
		`{"type":"execute_tool","data":{"requestId":"bad-1"}}`,
		`{"type":"execute_tool","data":{"requestId":"bad-2","toolName":"Echo","toolArgs":"nope"}}`,
		`{"type":"cancel_tool","data":{}}`,
		`{"type":"vcp_tool_status","data":{"x":1}}`,
		`{"type":"some_broadcast","data":"whatever"}`,
	} {
		if err := c.SendRaw(h.ctx, []byte(raw)); err != nil {
			t.Fatalf("send %s: %v", raw, err)
		}
	}
	if err := c.SendBinary(h.ctx, []byte(`{"type":"execute_tool","data":{"requestId":"bin-1","toolName":"Echo","toolArgs":{"text":"binary"}}}`)); err != nil {
		t.Fatal(err)
	}
	// Malformed calls that carry a requestId are still answered.
	for _, id := range []string{"bad-1", "bad-2"} {
		msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
			r, ok := m.(wsproto.ToolResult)
			return ok && r.RequestID == id
		})
		if err != nil {
			t.Fatalf("no tool_result for %s: %v", id, err)
		}
		if r := msg.(wsproto.ToolResult); r.Status != wsproto.StatusError || !strings.Contains(r.Error, "could not read this call") {
			t.Errorf("%s answered %+v", id, r)
		}
	}
	// A binary frame is JSON too, as the server treats it.
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == "bin-1"
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusSuccess {
		t.Fatalf("binary call: %+v, %v", msg, err)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "still here"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("session unusable after bad frames: %+v", res)
	}
	if s, _ := h.engine.State(); s.Sessions != 1 {
		t.Errorf("sessions = %d: a malformed frame ended the session", s.Sessions)
	}
	h.waitLog("ignored a malformed frame")
}

func TestCancelToolCancelsTheCall(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "slow-1", ToolName: "Gate"}); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "slow-1")
	if err := c.Send(h.ctx, wsproto.CancelTool{RequestID: "slow-1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-gate.Cancelled:
		if id != "slow-1" {
			t.Fatalf("cancelled %q", id)
		}
	case <-h.ctx.Done():
		t.Fatal("cancel_tool did not cancel the call's context")
	}
	// Cancelling an unknown id is harmless.
	if err := c.Send(h.ctx, wsproto.CancelTool{RequestID: "never-seen"}); err != nil {
		t.Fatal(err)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "after cancel"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after cancel: %+v", res)
	}
}

func TestDuplicateRequestIDIsIgnored(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}})
	c := h.accept()
	call := wsproto.ExecuteTool{RequestID: "dup-1", ToolName: "Gate"}
	if err := c.Execute(h.ctx, call); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "dup-1")
	if err := c.Execute(h.ctx, call); err != nil {
		t.Fatal(err)
	}
	// The node reads frames in order: once this round trip is done, the
	// duplicate has been seen and must not have started a second run.
	h.call(c, "Echo", map[string]any{"text": "barrier"})
	select {
	case id := <-gate.Started:
		t.Fatalf("duplicate started a second run (%s)", id)
	default:
	}
	close(gate.Release)
	if _, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == "dup-1"
	}); err != nil {
		t.Fatal(err)
	}
	h.call(c, "Echo", map[string]any{"text": "barrier 2"})
	n := 0
	for _, f := range c.Received() {
		if r, ok := f.Msg.(wsproto.ToolResult); ok && r.RequestID == "dup-1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("dup-1 answered %d times, want once", n)
	}
}

func TestBusyNodeAnswersAtOnce(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, config: func(c *config.Config) {
		c.Node.MaxConcurrent = 1
		c.Node.Queue = 0
	}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "hold", ToolName: "Gate"}); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "hold")
	res := h.call(c, "Echo", map[string]any{"text": "x"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "node busy") {
		t.Fatalf("call past the limit = %+v, want node busy", res)
	}
	close(gate.Release)
}
