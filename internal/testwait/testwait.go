// Package testwait is the tests' one way to wait for state: by its change
// notification where it has one, else by polling a condition with a
// deadline; never sleep. Only _test files import it (internal/archtest checks).
package testwait

import (
	"context"
	"testing"
	"time"
)

// Limit bounds For: generous, for -race on a loaded two-core machine.
const Limit = 30 * time.Second

// every is how often Poll checks the condition.
const every = 5 * time.Millisecond

// Poll checks cond until it holds (true) or ctx ends first (false).
func Poll(ctx context.Context, cond func() bool) bool {
	if cond() {
		return true
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
		case <-ctx.Done():
			return cond()
		}
	}
}

// For polls cond until it holds, failing tb, naming what, after Limit.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Limit)
	defer cancel()
	if !Poll(ctx, cond) {
		tb.Fatalf("gave up waiting for %s after %s", what, Limit)
	}
}

// Long is a context for a test whose length the machine's load sets, not
// what it proves (megabytes through -race on a loaded machine): it ends
// LongMargin before the test binary's -timeout would panic, so the failure
// still says what was awaited, and after LongDefault without a -timeout.
func Long(t interface{ Deadline() (time.Time, bool) }) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), d.Add(-LongMargin))
	}
	return context.WithTimeout(context.Background(), LongDefault)
}

// Bounds of Long.
const (
	LongMargin  = 30 * time.Second
	LongDefault = 10 * time.Minute
)

// Change waits, by the state's own change notification, until ok holds
// for the state read returns (a snapshot and a channel closed at the next
// change); it fails tb, naming what, when ctx ends first.
func Change[S any](ctx context.Context, tb testing.TB, what string, read func() (S, <-chan struct{}), ok func(S) bool) S {
	tb.Helper()
	for {
		s, changed := read()
		if ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-ctx.Done():
			tb.Fatalf("timed out waiting for %s; state %+v", what, s)
		}
	}
}
