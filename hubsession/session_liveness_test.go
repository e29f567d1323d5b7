package hubsession

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// The liveness window of these tests: 100 ms pings, 1 s pong timeout. The
// pong timeout is long enough that a descheduled test process does not end
// a healthy connection; the decoder's wait (busyWait) is a minute, so that
// anything stretching the deadline by it shows as a connection kept long
// past the window.
const (
	livePing = 100 * time.Millisecond
	livePong = time.Second
	// pingsBeforeGivingUp is how many pings the frozen connection may get
	// after its last frame before the node must have replaced it: the
	// window holds about 11, and the rest is slack for a loaded machine.
	pingsBeforeGivingUp = 50
)

// liveHarness starts a harness whose hub can freeze a connection at the
// moment it writes a frame (freezing before the write would let the hub's
// own preparation of a large frame count as the server's silence).
func liveHarness(t *testing.T, o harnessOpt) (*harness, *freezer) {
	fz := &freezer{}
	o.hubOpts.OnFrame = fz.onFrame
	o = o.andConfig(func(c *config.Config) {
		c.Hub.PingInterval = config.Duration(livePing)
		c.Hub.PongTimeout = config.Duration(livePong)
	})
	base := o.timings
	o.timings = func(tm *Timings) {
		tm.BusyWait = time.Minute
		if base != nil {
			base(tm)
		}
	}
	return startHarness(t, o), fz
}

// freezer stops the armed connection's pongs as the hub writes its next frame.
type freezer struct{ armed atomic.Pointer[demohub.Conn] }

func (fz *freezer) onFrame(f demohub.Frame) {
	// StopPonging is an atomic store: safe from OnFrame.
	if c := fz.armed.Load(); c != nil && f.Dir == demohub.ToNode && f.ConnID == c.ID() {
		c.StopPonging()
	}
}

// freezeAfter runs send, the last frames the hub sends on c, and freezes c
// (no pong, no frame) from the first of them on. It returns the node's next
// connection, and fails if the frozen one got pingsBeforeGivingUp pings
// after send first: detection is judged by which comes first, the new
// connection or that ping, not by a clock.
func freezeAfter(t *testing.T, h *harness, fz *freezer, c *demohub.Conn, send func()) *demohub.Conn {
	t.Helper()
	// A first ping round trip: the session is up and pinging.
	if err := c.WaitPings(h.ctx, 1); err != nil {
		t.Fatalf("the node never pinged: %v", err)
	}
	fz.armed.Store(c)
	send()
	base := c.PingsReceived()
	frozen := time.Now() // for the log only: detection is judged by pings
	defer func() {
		t.Logf("frozen connection replaced %s after the last frame was sent", time.Since(frozen).Round(time.Millisecond))
	}()

	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	tooLate := make(chan error, 1)
	go func() { tooLate <- c.WaitPings(ctx, base+pingsBeforeGivingUp) }()
	next := make(chan *demohub.Conn, 1)
	go func() {
		n, err := h.hub.Accept(ctx)
		if err == nil {
			next <- n
		}
	}()
	select {
	case n := <-next:
		return checkPings(t, c, base, n)
	case err := <-tooLate:
		if err == nil {
			t.Fatalf("the frozen connection got %d pings after its last frame (ping %s + pong %s allow about %d) and the node still kept it",
				pingsBeforeGivingUp, livePing, livePong, int((livePing+livePong)/livePing))
		}
		// The node closed the frozen connection before the limit: the
		// next connection must come.
		select {
		case n := <-next:
			return checkPings(t, c, base, n)
		case <-h.ctx.Done():
			t.Fatalf("the node gave up the frozen connection (%v) but never connected again", err)
		}
	}
	return nil
}

func checkPings(t *testing.T, c *demohub.Conn, base int, next *demohub.Conn) *demohub.Conn {
	t.Helper()
	if got := c.PingsReceived() - base; got >= pingsBeforeGivingUp {
		t.Fatalf("the frozen connection got %d pings after its last frame before the node replaced it", got)
	}
	return next
}

// checkReplaced asserts the frozen connection ended for lack of pongs and
// the new one serves calls.
func checkReplaced(t *testing.T, h *harness, next *demohub.Conn) {
	t.Helper()
	h.waitLog("connection presumed dead")
	if res := h.call(next, "Echo", map[string]any{"text": "alive"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call on the new connection: %+v", res)
	}
}

func TestFrozenServerAfterAFrameIsDetected(t *testing.T) {
	h, fz := liveHarness(t, harnessOpt{})
	c := h.accept()
	next := freezeAfter(t, h, fz, c, func() {
		// A call the node answers: the last sign of life is this frame.
		if res := h.call(c, "Echo", map[string]any{"text": "last words"}); res.Status != wsproto.StatusSuccess {
			t.Fatalf("call before the freeze: %+v", res)
		}
	})
	checkReplaced(t, h, next)
}

func TestFrozenServerAfterALargeFrameIsDetected(t *testing.T) {
	h, fz := liveHarness(t, harnessOpt{})
	c := h.accept()
	next := freezeAfter(t, h, fz, c, func() {
		big := `{"type":"some_broadcast","data":{"blob":"` + strings.Repeat("z", 8<<20) + `"}}`
		if err := c.SendRaw(h.ctx, []byte(big)); err != nil {
			t.Fatal(err)
		}
	})
	checkReplaced(t, h, next)
}

func TestFrozenServerAfterABurstIsDetected(t *testing.T) {
	h, fz := liveHarness(t, harnessOpt{})
	c := h.accept()
	next := freezeAfter(t, h, fz, c, func() {
		for i := range 500 {
			if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: fmt.Sprintf("burst-%d", i), ToolName: "Echo",
				ToolArgs: burstArgs}); err != nil {
				t.Fatal(err)
			}
		}
	})
	checkReplaced(t, h, next)
}

// A burst that overflows the decoder (held, as a slow decode on a loaded
// machine would hold it) right before the server freezes: the frames with
// no room are answered busy, and the frozen connection is still given up
// within the window; the next connection does not wait for the decoder.
func TestFrozenServerWhileTheDecoderIsFullIsDetected(t *testing.T) {
	const heldSize = 3000
	hold := make(chan struct{})
	var held atomic.Bool
	h, fz := liveHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.DecodeBudget = 64 * config.KiB
		tm.BeforeDecode = func(n int) {
			if n > heldSize && held.CompareAndSwap(false, true) {
				<-hold
			}
		}
	}})
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer release()
	c := h.accept()
	const burst = 400
	next := freezeAfter(t, h, fz, c, func() {
		first := `{"type":"some_broadcast","data":{"blob":"` + strings.Repeat("z", heldSize) + `"}}`
		if err := c.SendRaw(h.ctx, []byte(first)); err != nil {
			t.Fatal(err)
		}
		for i := range burst {
			if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: fmt.Sprintf("burst-%d", i), ToolName: "Echo",
				ToolArgs: burstArgs}); err != nil {
				t.Fatal(err)
			}
		}
	})
	release()
	checkReplaced(t, h, next)
	busy := 0
	for _, f := range c.Received() {
		if r, ok := f.Msg.(wsproto.ToolResult); ok && strings.Contains(r.Error, "node busy") {
			busy++
		}
	}
	if busy == 0 {
		t.Errorf("no call of the %d-call burst was answered busy while the decoder was full", burst)
	}
	// The calls queued behind the held decode belonged to the dead
	// connection: none of them ran.
	for _, rec := range h.host.disp.InFlight() {
		if strings.HasPrefix(rec.RequestID, "burst-") {
			t.Errorf("a call of the dead connection is in flight: %+v", rec)
		}
	}
}

var burstArgs = map[string]json.RawMessage{"text": json.RawMessage(`"burst"`)}
