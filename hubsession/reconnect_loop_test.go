package hubsession

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/wsproto"
)

// fakeClock hands every wait the reconnect loop asks for to the test, which
// fires it after moving the clock forward.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	waits chan fakeWait
}

type fakeWait struct {
	d    time.Duration
	fire chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Unix(1_000_000, 0), waits: make(chan fakeWait, 64)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	w := fakeWait{d: d, fire: make(chan time.Time, 1)}
	c.waits <- w
	return w.fire, func() {}
}

// next returns the loop's next wait request without firing it.
func (c *fakeClock) next(ctx context.Context, t *testing.T) fakeWait {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-ctx.Done():
		t.Fatal("the reconnect loop never asked to wait")
		return fakeWait{}
	}
}

func (c *fakeClock) fire(w fakeWait) {
	c.mu.Lock()
	c.t = c.t.Add(w.d)
	now := c.t
	c.mu.Unlock()
	w.fire <- now
}

func within(d, step time.Duration) bool {
	return d >= time.Duration(float64(step)*(1-hubconn.StepJitter)) && d <= time.Duration(float64(step)*(1+hubconn.StepJitter))
}

// The loop follows the schedule while the server is down and starts over
// from the fast steps once a connection has registered, however short it was.
func TestReconnectLoopScheduleAndReset(t *testing.T) {
	clk := newFakeClock()
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.Retry = hubconn.DefaultRetryPolicy()
		tm.Clock = clk
		tm.Jitter = func() float64 { return 0.999 }
	}})
	first := h.accept()
	if _, err := first.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.hub.Stop(h.ctx) // nothing listens now: every dial is refused
	p := hubconn.DefaultRetryPolicy()
	for i, step := range p.Steps {
		w := clk.next(h.ctx, t)
		if !within(w.d, step) {
			t.Fatalf("wait %d = %v, want about %v", i, w.d, step)
		}
		clk.fire(w)
	}
	for i := range 5 {
		w := clk.next(h.ctx, t)
		if w.d < p.Floor || w.d > p.Ceiling {
			t.Fatalf("jittered wait %d = %v, want within [%v, %v]", i, w.d, p.Floor, p.Ceiling)
		}
		clk.fire(w)
	}
	s, _ := h.engine.State()
	if s.Phase != controlapi.PhaseBackoff && s.Phase != controlapi.PhaseConnecting || s.Attempt < len(p.Steps) {
		t.Errorf("state while down = %+v", s)
	}

	// A long outage (on the fake clock) grows the ceiling.
	w := clk.next(h.ctx, t)
	w.d = 10 * time.Minute
	clk.fire(w)
	w = clk.next(h.ctx, t)
	if w.d > p.Max || w.d < p.Max*99/100 {
		t.Fatalf("wait after a 10-minute outage = %v, want the top of the jitter at the %v cap", w.d, p.Max)
	}

	if err := h.hub.Resume(); err != nil {
		t.Fatal(err)
	}
	clk.fire(w)
	second := h.accept()
	if _, err := second.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.waitState("connected again", func(s connState) bool { return s.Phase == controlapi.PhaseConnected && s.Attempt == 0 })
	second.Drop()
	w = clk.next(h.ctx, t)
	if !within(w.d, p.Steps[0]) {
		t.Fatalf("first wait after a registered session = %v, want about %v (the schedule was not reset)", w.d, p.Steps[0])
	}
	clk.fire(w)
	h.accept()
}

// A server that keeps restarting with one second of up-time: the node
// registers on every incarnation. The test asserts that, not how fast; the
// time each took is logged (docs/performance.md reports measured numbers).
func TestReconnectFlappingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 15 s of real time (10 server restarts)")
	}
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		d := DefaultTimings()
		tm.Retry, tm.ConnsPerMinute, tm.ConnBurst = d.Retry, d.ConnsPerMinute, d.ConnBurst
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := h.accept()
	if _, err := c.WaitType(ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	const flaps, upTime = 10, time.Second
	for i := range flaps {
		h.hub.Stop(ctx)
		if err := h.hub.Resume(); err != nil {
			t.Fatal(err)
		}
		listening := time.Now()
		c = acceptNewer(ctx, t, h.hub, c)
		if _, err := c.WaitType(ctx, wsproto.TypeRegisterTools); err != nil {
			t.Fatalf("flap %d: %v", i+1, err)
		}
		t.Logf("flap %d: registered %v after the server listened again", i+1, time.Since(listening).Round(time.Millisecond))
		// The scenario's up-time, not a synchronisation: the server stays up
		// this long before the next restart.
		<-time.After(time.Until(listening.Add(upTime)))
	}
	if s, _ := h.engine.State(); s.Sessions != flaps+1 {
		t.Errorf("sessions = %d, want %d", s.Sessions, flaps+1)
	}
}

// acceptNewer skips connections older than prev (none are expected, but a
// stale one must not count as the re-registration).
func acceptNewer(ctx context.Context, t *testing.T, hub *demohub.Hub, prev *demohub.Conn) *demohub.Conn {
	t.Helper()
	for {
		c, err := hub.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c != prev {
			return c
		}
	}
}
