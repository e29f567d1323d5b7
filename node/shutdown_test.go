package node

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestGracefulShutdownFinishesInFlightCalls(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "inflight", ToolName: "Gate"}); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "inflight")
	h.stop()
	h.waitState("stopping", func(s ConnState) bool { return s.Phase == PhaseStopping })

	// New calls are refused, but still answered.
	res := h.call(c, "Echo", map[string]any{"text": "too late"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "shutting down") {
		t.Fatalf("call during shutdown = %+v", res)
	}
	close(gate.Release)
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == "inflight"
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusSuccess {
		t.Fatalf("in-flight call during shutdown: %+v, %v", msg, err)
	}
	select {
	case <-c.Done():
	case <-h.ctx.Done():
		t.Fatal("connection not closed after shutdown")
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "1001") {
		t.Errorf("connection ended with %v, want a 1001 close frame", err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

func TestHurryCancelsInFlightCalls(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, config: func(c *config.Config) {
		c.Node.ShutdownGrace = config.Duration(time.Hour)
	}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "stuck", ToolName: "Gate"}); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "stuck")
	h.stop()
	h.waitState("stopping", func(s ConnState) bool { return s.Phase == PhaseStopping })
	h.node.Hurry()
	select {
	case <-gate.Cancelled:
	case <-h.ctx.Done():
		t.Fatal("Hurry did not cancel the in-flight call")
	}
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == "stuck"
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusError {
		t.Fatalf("hurried call: %+v, %v", msg, err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

func TestShutdownWhileDisconnected(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	h.hub.RefuseHandshakes(-1)
	c.Drop()
	h.waitState("backoff", func(s ConnState) bool { return s.Phase == PhaseBackoff })
	done := make(chan error, 1)
	go func() { done <- h.shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown hung while disconnected")
	}
}

// Run returns nil after a stop asked through its context, whatever the
// cause, and refuses a second run.
func TestRunReturnValue(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	h.accept()
	h.stopWith(errors.New("SIGTERM"))
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run after a stop asked with a cause = %v, want nil", err)
	}
	if err := h.node.Run(h.ctx); !errors.Is(err, errRunTwice) {
		t.Fatalf("second Run = %v, want errRunTwice", err)
	}
}
