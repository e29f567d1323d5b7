package testwait

import (
	"context"
	"sync/atomic"
	"testing"
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
