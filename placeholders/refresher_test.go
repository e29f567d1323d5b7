package placeholders

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// testWait bounds every wait for something that must happen: generous,
// because the suite must pass on a loaded 2-core machine.
const testWait = 30 * time.Second

// step is one scripted run: what Run returns.
type step struct {
	out Output
	err error
}

// scriptedSource blocks each run until the test hands it a step (or the run
// is cancelled), and announces every run start on started.
type scriptedSource struct {
	name    string
	keys    []string
	started chan int
	steps   chan step
	runs    atomic.Int32
}

func newScripted(name string, keys ...string) *scriptedSource {
	return &scriptedSource{name: name, keys: keys, started: make(chan int, 64), steps: make(chan step)}
}

func (s *scriptedSource) Name() string           { return s.name }
func (s *scriptedSource) Placeholders() []string { return s.keys }
func (s *scriptedSource) Run(ctx context.Context) (Output, error) {
	s.started <- int(s.runs.Add(1))
	select {
	case st := <-s.steps:
		return st.out, st.err
	case <-ctx.Done():
		return Output{}, ctx.Err()
	}
}

// waitStarted waits for run n to start.
func (s *scriptedSource) waitStarted(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-s.started:
		if got != n {
			t.Fatalf("%s: run %d started, want run %d", s.name, got, n)
		}
	case <-time.After(testWait):
		t.Fatalf("%s: run %d never started", s.name, n)
	}
}

func (s *scriptedSource) assertNotStarted(t *testing.T) {
	t.Helper()
	select {
	case n := <-s.started:
		t.Fatalf("%s: unexpected run %d", s.name, n)
	default:
	}
}

// finish hands the running run its result and, given a key, waits until
// the store holds want for it.
func finish(t *testing.T, store *Store, src *scriptedSource, st step, key, want string) {
	t.Helper()
	select {
	case src.steps <- st:
	case <-time.After(testWait):
		t.Fatalf("%s: no run waiting for its result", src.name)
	}
	if key != "" {
		testwait.For(t, key+" = "+want, func() bool { e, _ := store.Entry(key); return e.Value == want })
	}
}

func statsOf(t *testing.T, r *Refresher, name string) JobStats {
	t.Helper()
	for _, st := range r.Stats() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no stats for %q", name)
	return JobStats{}
}

func mustEvery(t *testing.T, d time.Duration) Schedule {
	t.Helper()
	s, err := Every(d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newTestRefresher(t *testing.T, minInterval time.Duration) (*Refresher, *Store, *fakeClock) {
	store, clock := NewStore(), newFakeClock()
	r := NewRefresher(store, zerolog.Nop(), Options{MinInterval: minInterval, Clock: clock})
	t.Cleanup(r.Stop)
	return r, store, clock
}

func TestRefresherSingleFlight(t *testing.T) {
	r, store, clock := newTestRefresher(t, 0)
	src := newScripted("slow", "Slow")
	if _, err := r.Update([]Job{{Source: src, Schedule: mustEvery(t, time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	src.waitStarted(t, 1) // at start, before any fire
	if d := clock.waitArmed(t); d != time.Minute {
		t.Fatalf("first timer %s, want 1m", d)
	}
	for i := 1; i <= 2; i++ { // two fires while run 1 is still going
		clock.Advance(time.Minute)
		clock.waitArmed(t)
		if st := statsOf(t, r, "slow"); st.SkippedBusy != i || st.Runs != 1 || !st.Running {
			t.Fatalf("after busy fire %d: %+v", i, st)
		}
	}
	src.assertNotStarted(t)
	finish(t, store, src, step{out: Output{Text: "v1"}}, "{{Slow}}", "v1")

	clock.Advance(time.Minute)
	src.waitStarted(t, 2)
	clock.waitArmed(t)
	if st := statsOf(t, r, "slow"); st.SkippedBusy != 2 || st.Runs != 2 {
		t.Fatalf("after an idle fire: %+v", st)
	}
	finish(t, store, src, step{out: Output{Text: "v2"}}, "{{Slow}}", "v2")
}

func TestRefresherMinInterval(t *testing.T) {
	r, store, clock := newTestRefresher(t, 10*time.Second)
	src := newScripted("fast", "Fast")
	if _, err := r.Update([]Job{{Source: src, Schedule: mustEvery(t, 4*time.Second)}}); err != nil {
		t.Fatal(err)
	}
	src.waitStarted(t, 1)
	clock.waitArmed(t)
	finish(t, store, src, step{out: Output{Text: "1"}}, "{{Fast}}", "1")
	for i := 1; i <= 2; i++ { // fires at +4s and +8s: within 10s of the start at 0s
		clock.Advance(4 * time.Second)
		clock.waitArmed(t)
		if st := statsOf(t, r, "fast"); st.SkippedTooSoon != i || st.Runs != 1 {
			t.Fatalf("fire %d: %+v", i, st)
		}
	}
	clock.Advance(4 * time.Second) // +12s
	src.waitStarted(t, 2)
	clock.waitArmed(t)
	finish(t, store, src, step{out: Output{Text: "2"}}, "{{Fast}}", "2")
	if st := statsOf(t, r, "fast"); st.SkippedTooSoon != 2 || st.SkippedBusy != 0 || st.Runs != 2 {
		t.Fatalf("after the run at +12s: %+v", st)
	}
}

func TestRefresherOutcomes(t *testing.T) {
	r, store, clock := newTestRefresher(t, 0)
	src := newScripted("plugin P", "{{A}}", "B")
	if _, err := r.Update([]Job{{Source: src, Schedule: mustEvery(t, time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	clock.waitArmed(t)
	cases := []struct {
		name       string
		st         step
		a, b, errA string
	}{
		{"text feeds both", step{out: Output{Text: "x\n"}}, "x", "x", ""},
		{"per-key JSON, keys spelled as declared", step{out: Output{Text: `{"{{A}}":"a","B":"b"}`}}, "a", "b", ""},
		{"error keeps values", step{err: errors.New("exit 2")}, "a", "b", "exit 2"},
		{"empty output keeps values", step{out: Output{Text: "  "}}, "a", "b", "exit 2"},
		{"timed-out partial output counts", step{out: Output{Text: "partial", TimedOut: true}}, "partial", "partial", ""},
		{"verbatim is never split", step{out: Output{Text: `{"A":"1"}`, Verbatim: true}}, `{"A":"1"}`, `{"A":"1"}`, ""},
	}
	for i, c := range cases {
		if i > 0 {
			clock.Advance(time.Minute)
			clock.waitArmed(t)
		}
		src.waitStarted(t, i+1)
		_, v := store.Snapshot()
		finish(t, store, src, c.st, "", "")
		// Wait until the loop has recorded the run, after the store.
		testwait.For(t, "plugin P to finish", func() bool { return !statsOf(t, r, "plugin P").Running })
		a, _ := store.Entry("A")
		b, _ := store.Entry("B")
		if a.Value != c.a || b.Value != c.b || a.LastError != c.errA || a.Source != "plugin P" {
			t.Fatalf("%s: A=%+v B=%+v", c.name, a, b)
		}
		if delta, _ := store.Since(v); c.st.err != nil && len(delta) != 0 {
			t.Fatalf("%s: a failed run changed %v", c.name, delta)
		}
	}
}

func TestRefresherNoScheduleAndSideEffects(t *testing.T) {
	r, store, clock := newTestRefresher(t, 0)
	once := newScripted("once", "Once")
	side := newScripted("side") // no placeholders: runs for its side effect
	if _, err := r.Update([]Job{{Source: once}, {Source: side, Schedule: mustEvery(t, time.Second)}}); err != nil {
		t.Fatal(err)
	}
	once.waitStarted(t, 1)
	side.waitStarted(t, 1)
	finish(t, store, once, step{out: Output{Text: "v"}}, "{{Once}}", "v")
	finish(t, store, side, step{out: Output{Text: "ignored"}}, "", "")
	testwait.For(t, "side to finish", func() bool { return !statsOf(t, r, "side").Running })
	clock.waitArmed(t) // only the side-effect job has a timer
	clock.Advance(time.Second)
	side.waitStarted(t, 2)
	clock.waitArmed(t)
	clock.assertNotArmed(t)
	once.assertNotStarted(t)
	if st := statsOf(t, r, "once"); !st.NextRun.IsZero() || st.Runs != 1 {
		t.Fatalf("once: %+v", st)
	}
	if snap, _ := store.Snapshot(); len(snap) != 1 {
		t.Fatalf("snapshot = %v", snap)
	}
}

func TestRefresherStopCancelsRuns(t *testing.T) {
	store := NewStore()
	r := NewRefresher(store, zerolog.Nop(), Options{})
	src := newScripted("hang", "Hang")
	if _, err := r.Update([]Job{{Source: src, Schedule: mustEvery(t, time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	src.waitStarted(t, 1)
	stopped := make(chan struct{})
	go func() { r.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(testWait):
		t.Fatal("Stop did not cancel the run in progress")
	}
	if e, _ := store.Entry("Hang"); e.LastError != "" {
		t.Fatalf("a run cut by Stop recorded an error: %+v", e)
	}
	if _, err := r.Update(nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("Update after Stop = %v", err)
	}
	r.Stop() // idempotent
}

func TestRefresherJobTimeout(t *testing.T) {
	store := NewStore()
	r := NewRefresher(store, zerolog.Nop(), Options{})
	t.Cleanup(r.Stop)
	src := newScripted("stuck", "Stuck")
	if _, err := r.Update([]Job{{Source: src, Timeout: 20 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	src.waitStarted(t, 1)
	testwait.For(t, "an error for Stuck", func() bool { e, _ := store.Entry("Stuck"); return e.LastError != "" })
	e, _ := store.Entry("Stuck")
	if !strings.Contains(e.LastError, "no result within 20ms") || e.HasValue {
		t.Fatalf("entry = %+v", e)
	}
}

func TestRefresherRealClockRepeats(t *testing.T) {
	r := NewRefresher(NewStore(), zerolog.Nop(), Options{})
	t.Cleanup(r.Stop)
	src := newScripted("tick")
	if _, err := r.Update([]Job{{Source: src, Schedule: mustEvery(t, 20*time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 3; n++ {
		src.waitStarted(t, n)
		select {
		case src.steps <- step{}:
		case <-time.After(testWait):
			t.Fatal("run did not wait for its step")
		}
	}
}

func TestRefresherUpdate(t *testing.T) {
	r, store, clock := newTestRefresher(t, 0)
	a1 := newScripted("a", "X")
	b := newScripted("b", "Y")
	if _, err := r.Update([]Job{{Source: a1, Fingerprint: "1"}, {Source: b}}); err != nil {
		t.Fatal(err)
	}
	a1.waitStarted(t, 1)
	b.waitStarted(t, 1)
	finish(t, store, a1, step{out: Output{Text: "x"}}, "{{X}}", "x")
	finish(t, store, b, step{out: Output{Text: "y"}}, "{{Y}}", "y")

	// Same fingerprint: a keeps running without a re-run; b goes, and its
	// key with it.
	a2 := newScripted("a", "X")
	removed, err := r.Update([]Job{{Source: a2, Fingerprint: "1"}})
	if err != nil || len(removed) != 1 || removed[0] != "{{Y}}" {
		t.Fatalf("Update = %v, %v; want {{Y}} removed", removed, err)
	}
	a2.assertNotStarted(t)
	if _, ok := store.Entry("Y"); ok {
		t.Fatal("{{Y}} still in the store")
	}

	// New fingerprint and a second key: a restarts and runs at once.
	a3 := newScripted("a", "X", "Z")
	if removed, err := r.Update([]Job{{Source: a3, Fingerprint: "2", Schedule: mustEvery(t, time.Minute)}}); err != nil || len(removed) != 0 {
		t.Fatalf("Update = %v, %v", removed, err)
	}
	a3.waitStarted(t, 1)
	clock.waitArmed(t)
	if e, _ := store.Entry("X"); e.Value != "x" {
		t.Fatalf("a restarted job lost the previous value: %+v", e)
	}
	finish(t, store, a3, step{out: Output{Text: "x3"}}, "{{Z}}", "x3")
	if st := r.Stats(); len(st) != 1 || st[0].Name != "a" || len(st[0].Placeholders) != 2 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestRefresherUpdateConflicts(t *testing.T) {
	r, store, _ := newTestRefresher(t, 0)
	first := newScripted("plugin Weather", "Weather")
	second := newScripted("command Weather", "{{Weather}}")
	dup := newScripted("plugin Weather", "Other")
	bad := newScripted("bad", "not a name")
	_, err := r.Update([]Job{{Source: first}, {Source: second}, {Source: dup}, {Source: bad}})
	var ce *ClaimError
	if !errors.As(err, &ce) || ce.Holder != "plugin Weather" || ce.Claimant != "command Weather" {
		t.Fatalf("err = %v, want a ClaimError naming both sources", err)
	}
	for _, want := range []string{"defined twice", ErrBadKey.Error()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !errors.Is(err, ErrBadKey) {
		t.Errorf("error does not wrap ErrBadKey: %v", err)
	}
	first.waitStarted(t, 1)
	finish(t, store, first, step{out: Output{Text: "sun"}}, "{{Weather}}", "sun")
	second.assertNotStarted(t)
	dup.assertNotStarted(t)
	bad.assertNotStarted(t)
	if st := r.Stats(); len(st) != 1 {
		t.Fatalf("stats = %+v, want only the first job", st)
	}
}
