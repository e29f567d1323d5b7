package hubconn

import (
	"testing"
	"time"
)

// stepClock is a hand-moved clock for the schedule and the limiter.
type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time          { return c.t }
func (c *stepClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestRetryScheduleStepsThenJitteredCeiling(t *testing.T) {
	clk := &stepClock{t: time.Unix(1_000_000, 0)}
	for _, r := range []struct {
		name string
		rnd  float64
	}{{"low", 0}, {"mid", 0.5}, {"high", 0.999999}} {
		t.Run(r.name, func(t *testing.T) {
			p := DefaultRetryPolicy()
			s := NewRetrySchedule(p, clk.now, func() float64 { return r.rnd })
			for i, step := range p.Steps {
				got := s.Next()
				lo := time.Duration(float64(step) * (1 - StepJitter))
				hi := time.Duration(float64(step) * (1 + StepJitter))
				if got < lo || got > hi {
					t.Errorf("wait %d = %v, want within [%v, %v]", i, got, lo, hi)
				}
				clk.advance(got)
			}
			// Within the first minute of the outage: full jitter in [Floor, Ceiling].
			for i := 0; i < 20; i++ {
				got := s.Next()
				want := p.Floor + time.Duration(r.rnd*float64(p.Ceiling-p.Floor))
				if got != want {
					t.Fatalf("jittered wait %d = %v, want %v", i, got, want)
				}
				clk.advance(time.Second)
			}
			if s.Attempts() != len(p.Steps)+20 {
				t.Errorf("attempts = %d", s.Attempts())
			}
		})
	}
}

func TestRetryScheduleCeilingGrowsToTheCapForLongOutages(t *testing.T) {
	clk := &stepClock{t: time.Unix(1_000_000, 0)}
	p := DefaultRetryPolicy()
	s := NewRetrySchedule(p, clk.now, func() float64 { return 0.999999 })
	s.Next() // the outage starts now
	cases := []struct {
		down    time.Duration
		ceiling time.Duration
	}{
		{0, 1500 * time.Millisecond},
		{59 * time.Second, 1500 * time.Millisecond},
		{60 * time.Second, 3 * time.Second},
		{2 * time.Minute, 6 * time.Second},
		{3 * time.Minute, 12 * time.Second},
		{4 * time.Minute, 24 * time.Second},
		{5 * time.Minute, 30 * time.Second},
		{time.Hour, 30 * time.Second},
	}
	for _, c := range cases {
		if got := s.ceiling(c.down); got != c.ceiling {
			t.Errorf("ceiling after %v down = %v, want %v", c.down, got, c.ceiling)
		}
	}
	for range p.Steps {
		s.Next()
	}
	clk.advance(10 * time.Minute)
	if got := s.Next(); got > p.Max || got < p.Max-time.Millisecond {
		t.Errorf("wait after 10 minutes = %v, want about the %v cap", got, p.Max)
	}
}

func TestRetryScheduleResetStartsOverFast(t *testing.T) {
	clk := &stepClock{t: time.Unix(1_000_000, 0)}
	p := DefaultRetryPolicy()
	s := NewRetrySchedule(p, clk.now, func() float64 { return 0.5 })
	for range 30 {
		clk.advance(s.Next())
	}
	clk.advance(10 * time.Minute)
	if got := s.Next(); got < 10*time.Second {
		t.Fatalf("after a long outage the wait is %v, want it grown", got)
	}
	s.Reset()
	if got := s.Next(); got != p.Steps[0] {
		t.Errorf("first wait after reset = %v, want %v", got, p.Steps[0])
	}
	// The outage clock restarted too: no grown ceiling right after the reset.
	for range p.Steps {
		s.Next()
	}
	if got := s.Next(); got > p.Ceiling {
		t.Errorf("jittered wait after reset = %v, want at most %v", got, p.Ceiling)
	}
}

func TestConnLimiter(t *testing.T) {
	clk := &stepClock{t: time.Unix(1_000_000, 0)}
	l := NewConnLimiter(30, 10, clk.now) // one token every 2 s
	for i := range 10 {
		if d := l.Delay(); d != 0 {
			t.Fatalf("connection %d of the burst delayed %v", i, d)
		}
		l.Take()
	}
	if d := l.Delay(); d != 2*time.Second {
		t.Fatalf("after the burst: delay %v, want 2s", d)
	}
	clk.advance(500 * time.Millisecond)
	if d := l.Delay(); d != 1500*time.Millisecond {
		t.Fatalf("delay %v, want 1.5s", d)
	}
	clk.advance(1500 * time.Millisecond)
	if d := l.Delay(); d != 0 {
		t.Fatalf("delay %v once a token is back", d)
	}
	l.Take()
	// A long quiet spell refills only up to the burst.
	clk.advance(time.Hour)
	for i := range 10 {
		if d := l.Delay(); d != 0 {
			t.Fatalf("connection %d after an hour delayed %v", i, d)
		}
		l.Take()
	}
	if d := l.Delay(); d == 0 {
		t.Fatal("the bucket held more than its burst")
	}
	if NewConnLimiter(0, 10, clk.now).Delay() != 0 {
		t.Error("a zero limit must mean unlimited")
	}
}
