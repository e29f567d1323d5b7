package hubsession

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestReconnectsAfterDrop(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	first := h.accept()
	if _, err := first.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	first.Drop()

	second := h.accept()
	// Full state again: the server kept nothing of the old connection.
	if _, err := second.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	if _, err := second.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	if res := h.call(second, "Echo", map[string]any{"text": "again"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after reconnect: %+v", res)
	}
	h.waitState("second session with its own serverId", func(s connState) bool {
		return s.Sessions == 2 && s.ServerID == second.ServerID()
	})
}

func TestReconnectsAfterServerRestart(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	first := h.accept()
	if err := h.hub.Restart(h.ctx); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	second := h.accept()
	if res := h.call(second, "Echo", map[string]any{"text": "restarted"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after restart: %+v", res)
	}
}

func TestDeadConnectionIsDetected(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Hub.PingInterval = config.Duration(30 * time.Millisecond)
		c.Hub.PongTimeout = config.Duration(60 * time.Millisecond)
	}})
	first := h.accept()
	if err := first.WaitPings(h.ctx, 1); err != nil {
		t.Fatalf("the node never pinged: %v", err)
	}
	// A half-open connection: frames still flow to the hub, nothing comes back.
	first.StopPonging()
	second := h.accept()
	h.waitLog("connection presumed dead")
	if res := h.call(second, "Echo", map[string]any{"text": "alive"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after a dead connection: %+v", res)
	}
}

func TestAnswersServerPings(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	for i := range 3 {
		if err := c.Ping(h.ctx); err != nil {
			t.Fatalf("ping %d not answered: %v", i, err)
		}
	}
}

func TestOversizedFrameEndsOnlyTheSession(t *testing.T) {
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) { tm.ReadLimit = 4 * config.KiB }})
	first := h.accept()
	big := `{"type":"some_broadcast","data":{"blob":"` + strings.Repeat("z", 8*config.KiB) + `"}}`
	if err := first.SendRaw(h.ctx, []byte(big)); err != nil {
		t.Fatal(err)
	}
	second := h.accept()
	if res := h.call(second, "Echo", map[string]any{"text": "small"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after an oversized frame: %+v", res)
	}
	h.waitLog("larger than 4096 bytes")
}

func TestReregistersAfterConnecting(t *testing.T) {
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.Reregister = []time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	}})
	c := h.accept()
	for i := range 3 {
		msg, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
		if err != nil {
			t.Fatalf("register_tools #%d: %v", i+1, err)
		}
		if !msg.(wsproto.RegisterTools).Capabilities.CancelTool {
			t.Errorf("register_tools #%d lost capabilities", i+1)
		}
	}
	// Exactly three: on connect, +10ms, +30ms. The round trip orders the check.
	h.call(c, "Echo", map[string]any{"text": "barrier"})
	n := 0
	for _, f := range c.Received() {
		if f.Msg != nil && f.Msg.MessageType() == wsproto.TypeRegisterTools {
			n++
		}
	}
	if n != 3 {
		t.Errorf("register_tools sent %d times, want 3", n)
	}
}

func TestEmptyHandshakesGiveAHintOnce(t *testing.T) {
	// No grace after the session: whether the drop lands before or after
	// the node has registered, every dropped handshake counts at once
	// (the grace has its own test, TestDroppedHandshakesJustAfterASessionAreAnOutage).
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) { tm.DroppedHandshakeGrace = 0 }})
	c := h.accept()
	h.waitState("registered", func(s connState) bool { return s.Registered })
	h.hub.RefuseHandshakes(-1)
	c.Drop()
	if err := h.hub.WaitHandshakes(h.ctx, func(_, refused int) bool { return refused >= 4 }); err != nil {
		t.Fatal(err)
	}
	h.waitLog("likely a wrong key")
	if n := strings.Count(h.logs.String(), "likely a wrong key"); n != 1 {
		t.Errorf("hint logged %d times, want once", n)
	}
	s, _ := h.engine.State()
	if s.LastError == "" || strings.Contains(s.LastError, testKey) {
		t.Errorf("state last error = %q", s.LastError)
	}
	h.hub.RefuseHandshakes(0)
	h.accept()
}

func TestReconnectCutsTheBackoffShort(t *testing.T) {
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.Retry = hourRetries()
	}})
	first := h.accept()
	first.Drop()
	h.waitState("an hour-long backoff", func(s connState) bool {
		return s.Phase == controlapi.PhaseBackoff && time.Until(s.RetryAt) > 10*time.Minute
	})
	h.engine.Reconnect()
	h.accept()
}
