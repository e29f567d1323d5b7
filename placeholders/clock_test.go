package placeholders

import (
	"sync"
	"testing"
	"time"
)

// fakeClock moves only when Advance is called. Every NewTimer is announced
// on armed, so a test knows when the refresher has acted on a fire.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
	armed  chan time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{
		now:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		timers: map[*fakeTimer]bool{},
		armed:  make(chan time.Duration, 64),
	}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers[t] = true
	c.mu.Unlock()
	c.armed <- d
	return t
}

// Advance moves the clock and fires every timer that is due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			delete(c.timers, t)
			t.c <- c.now
		}
	}
}

// waitArmed waits for the refresher to set its next timer and returns the delay.
func (c *fakeClock) waitArmed(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.armed:
		return d
	case <-time.After(testWait):
		t.Fatal("the refresher never set its next timer")
		return 0
	}
}

// assertNotArmed checks that no timer was set since the last waitArmed.
func (c *fakeClock) assertNotArmed(t *testing.T) {
	t.Helper()
	select {
	case d := <-c.armed:
		t.Fatalf("unexpected timer of %s", d)
	default:
	}
}

type fakeTimer struct {
	clock *fakeClock
	at    time.Time
	c     chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	active := t.clock.timers[t]
	delete(t.clock.timers, t)
	return active
}
