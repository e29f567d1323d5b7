package testwait

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestPollSeesALaterChange(t *testing.T) {
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n.Load() < 3 {
			n.Add(1)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), Limit)
	defer cancel()
	if !Poll(ctx, func() bool { return n.Load() >= 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	<-done
}

func TestPollGivesUpWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := 0
	if Poll(ctx, func() bool { checks++; return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if checks == 0 {
		t.Fatal("Poll never checked the condition")
	}
}

type deadliner struct {
	d  time.Time
	ok bool
}

func (d deadliner) Deadline() (time.Time, bool) { return d.d, d.ok }

func TestLongEndsBeforeTheTestDeadline(t *testing.T) {
	end := time.Now().Add(time.Hour)
	ctx, cancel := Long(deadliner{end, true})
	defer cancel()
	if d, _ := ctx.Deadline(); !d.Equal(end.Add(-LongMargin)) {
		t.Errorf("deadline %v, want %v", d, end.Add(-LongMargin))
	}
	ctx, cancel = Long(deadliner{})
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > LongDefault || time.Until(d) < LongDefault-time.Minute {
		t.Errorf("deadline without a test deadline: %v, %v", d, ok)
	}
}
