package hubconn

import (
	"math/rand/v2"
	"time"
)

// Clock is the reconnect loop's view of time, so that tests can drive the
// schedule and the rate limit without waiting.
type Clock interface {
	Now() time.Time
	// Timer fires once after d; stop releases it early.
	Timer(d time.Duration) (fire <-chan time.Time, stop func())
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// RetryPolicy is how the node waits between attempts while the server is
// unreachable. Most outages are restarts lasting seconds, so the first
// retries are fast and the waits stay short for the first minute; only a
// long outage backs off to the cap.
type RetryPolicy struct {
	// Steps are the first waits after the connection is lost, each jittered
	// by ±StepJitter so that nodes restarted together spread out.
	Steps []time.Duration
	// Floor and Ceiling bound the waits after Steps (full jitter: uniform in
	// [Floor, Ceiling]) while the outage is younger than Patience.
	Floor, Ceiling time.Duration
	Patience       time.Duration
	// GrowEvery doubles the ceiling for each such stretch of outage past
	// Patience, up to Max.
	GrowEvery time.Duration
	Max       time.Duration
}

// StepJitter is the ±fraction by which each of RetryPolicy.Steps is jittered.
const StepJitter = 0.2

// DefaultRetryPolicy is the schedule of docs/reliability.md: 100 ms, 250 ms, 500 ms,
// 1 s, then jittered waits growing to 30 s over a long outage.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Steps:     []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second},
		Floor:     100 * time.Millisecond,
		Ceiling:   1500 * time.Millisecond,
		Patience:  time.Minute,
		GrowEvery: time.Minute,
		Max:       30 * time.Second,
	}
}

// RetrySchedule counts attempts since the last good connection and says how
// long to wait before the next one. It is owned by the reconnect loop.
type RetrySchedule struct {
	p     RetryPolicy
	now   func() time.Time
	rand  func() float64 // uniform in [0, 1)
	tries int            // failed attempts since the last reset
	since time.Time      // when the outage began; zero while connected
}

// NewRetrySchedule starts a schedule; rnd nil means math/rand.
func NewRetrySchedule(p RetryPolicy, now func() time.Time, rnd func() float64) *RetrySchedule {
	if rnd == nil {
		rnd = rand.Float64
	}
	return &RetrySchedule{p: p, now: now, rand: rnd}
}

// Reset is called once a connection has been accepted and register_tools
// sent: the node is useful again, so the next loss starts from fast retries.
func (r *RetrySchedule) Reset() {
	r.tries = 0
	r.since = time.Time{}
}

// Next records a failed attempt (or a lost connection) and returns the wait
// before the next attempt.
func (r *RetrySchedule) Next() time.Duration {
	now := r.now()
	if r.since.IsZero() {
		r.since = now
	}
	i := r.tries
	r.tries++
	if i < len(r.p.Steps) {
		d := float64(r.p.Steps[i]) * (1 - StepJitter + 2*StepJitter*r.rand())
		return time.Duration(d)
	}
	ceiling := r.ceiling(now.Sub(r.since))
	return r.p.Floor + time.Duration(r.rand()*float64(ceiling-r.p.Floor))
}

// ceiling is the longest wait after an outage of length down.
func (r *RetrySchedule) ceiling(down time.Duration) time.Duration {
	c := r.p.Ceiling
	if down >= r.p.Patience && r.p.GrowEvery > 0 {
		for n := (down-r.p.Patience)/r.p.GrowEvery + 1; n > 0 && c < r.p.Max; n-- {
			c *= 2
		}
	}
	return min(max(c, r.p.Floor), r.p.Max)
}

// Attempts is how many attempts failed since the last reset.
func (r *RetrySchedule) Attempts() int { return r.tries }

// ConnLimiter is a token bucket over connections that reach the server
// (accepted, refused by it, or closed during the handshake). Fast retries
// and resets would let a node whose session dies at once, every time,
// hammer the server; this caps that independently of the retry schedule.
type ConnLimiter struct {
	burst  float64
	every  time.Duration // one token per every
	now    func() time.Time
	tokens float64
	last   time.Time
}

// The limiter's rate for every connection to the server (docs/reliability.md:
// at most 60 connection attempts a minute).
const (
	DefaultConnsPerMinute = 60
	DefaultConnBurst      = 10
)

// NewConnLimiter allows burst connections at once and perMinute after
// that; perMinute 0 or less means unlimited (nil, whose methods allow all).
func NewConnLimiter(perMinute, burst int, now func() time.Time) *ConnLimiter {
	if perMinute <= 0 {
		return nil // unlimited
	}
	return &ConnLimiter{
		burst:  float64(burst),
		every:  time.Minute / time.Duration(perMinute),
		now:    now,
		tokens: float64(burst),
		last:   now(),
	}
}

func (l *ConnLimiter) refill() {
	now := l.now()
	l.tokens = min(l.burst, l.tokens+float64(now.Sub(l.last))/float64(l.every))
	l.last = now
}

// Delay is how long until one more connection is allowed (0: now).
func (l *ConnLimiter) Delay() time.Duration {
	if l == nil {
		return 0
	}
	l.refill()
	if l.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - l.tokens) * float64(l.every))
}

// Take records a connection that reached the server.
func (l *ConnLimiter) Take() {
	if l == nil {
		return
	}
	l.refill()
	l.tokens--
}
