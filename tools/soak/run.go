//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

type options struct {
	seed        uint64
	duration    time.Duration // of fault injection, after the warm-up
	quick       bool
	binary      string
	privileged  bool // use root-only faults when running as root
	callTimeout time.Duration
	slack       time.Duration // beyond callTimeout before a call counts as lost
	settle      time.Duration // for registration and resources after a fault
	only        map[string]bool
	keep        bool
	out         io.Writer
	daemonEnv   []string // added to the daemon's environment
}

// episode is one or more faults applied together, then cleared together.
type episode struct {
	n        int
	from, to time.Duration
	faults   []string // "kind (detail)"
}

type summary struct {
	opts       options
	started    time.Time
	elapsed    time.Duration
	violation  *violation
	episodes   []episode
	injected   map[string]int
	skipped    map[string]string
	t          *tally
	accepted   int
	delivered  int
	resent     int // callbacks delivered again on a later connection
	reregister []time.Duration
	unreg      []time.Duration
	baseline   sample
	final      sample
	peakRSS    int64
	memHits    int64 // v1 memory limit reached, over all memory-pressure faults
	memKills   int64 // processes the kernel OOM-killed then
	memV1      bool  // memory pressure is a v1 hard limit
	nodeJS     bool
	private    bool
	dir        string
}

type soak struct {
	o    options
	r    *rig
	rec  *recorder
	d    *driver
	s    *summary
	peak atomic.Int64 // the highest resident memory watch saw
}

// run is one soak: it returns an error only when the soak itself could not
// run; a broken invariant is summary.violation.
func run(ctx context.Context, o options) (*summary, error) {
	start := time.Now()
	rec := newRecorder(start)
	s := &summary{opts: o, started: start, injected: map[string]int{}, skipped: map[string]string{}, t: newTally()}
	r, err := newRig(ctx, o, rec)
	if r != nil {
		s.dir = r.dir
		defer func() {
			keep := o.keep || s.violation != nil
			if cerr := r.close(keep); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	if err != nil {
		return s, err
	}
	s.nodeJS, s.private, s.memV1 = r.nodeJ != "", r.private, r.cgroupV1
	s.started = rec.start // after the build
	so := &soak{o: o, r: r, rec: rec, s: s}
	err = so.run(ctx)
	s.elapsed = time.Since(start)
	return s, err
}

func (so *soak) stop() bool {
	if err := so.r.daemonAlive(); err != nil {
		so.rec.violate(err.Error()+"; log tail: "+so.r.logTail(), "", "")
	}
	if v := so.rec.firstViolation(); v != nil {
		so.s.violation = v
		return true
	}
	return false
}

func (so *soak) run(ctx context.Context) error {
	r, rec, s := so.r, so.rec, so.s
	if !rec.wait(time.Now().Add(so.o.settle), func() bool { _, ok := rec.registeredConnLocked(); return ok }) {
		return fmt.Errorf("vcpnode never registered with the hub within %s; log tail:\n%s", so.o.settle, r.logTail())
	}
	kinds := faultKinds(r)
	for name := range so.o.only {
		if !slices.ContainsFunc(kinds, func(f *fault) bool { return f.name == name }) {
			return fmt.Errorf("-faults: no fault kind %q", name)
		}
	}
	var usable []*fault
	for _, f := range kinds {
		switch {
		case f.disabled:
		case f.skip != "":
			s.skipped[f.name] = f.skip
		default:
			usable = append(usable, f)
		}
	}
	for name, why := range s.skipped {
		fmt.Fprintf(so.o.out, "skipped fault %s: %s\n", name, why)
	}
	so.d = newDriver(r, so.o.seed, s.t)
	driveCtx, stopDriving := context.WithCancel(ctx)
	driven := make(chan struct{})
	go func() { defer close(driven); so.d.run(driveCtx) }()
	defer func() { stopDriving(); <-driven }()

	watchCtx, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); so.watch(watchCtx) }()
	defer func() { stopWatching(); <-watched }()

	// Warm up without faults, then take the baseline at rest.
	warm := 5 * time.Second
	if so.o.quick {
		warm = 3 * time.Second
	}
	if sleepCtx(ctx, warm) != nil {
		return ctx.Err()
	}
	base, err := so.rest()
	if err != nil {
		return err
	}
	s.baseline = base
	fmt.Fprintf(so.o.out, "baseline at rest: %s\n", base)
	if so.stop() {
		return nil
	}

	seqRNG := rand.New(rand.NewPCG(so.o.seed, 1))
	end := time.Now().Add(so.o.duration)
	for n := 1; time.Now().Before(end) && len(usable) > 0; n++ {
		gap, hold := 1+seqRNG.IntN(4), 2+seqRNG.IntN(9)
		if so.o.quick {
			gap, hold = 1+seqRNG.IntN(2), 2+seqRNG.IntN(5)
		}
		k := 1 + seqRNG.IntN(3)
		perm := seqRNG.Perm(len(usable))
		if sleepCtx(ctx, time.Duration(gap)*time.Second) != nil {
			return ctx.Err()
		}
		if err := so.episode(ctx, n, perm[:min(k, len(perm))], usable, time.Duration(hold)*time.Second); err != nil {
			return err
		}
		if so.stop() {
			return nil
		}
		if _, err := so.rest(); err != nil {
			return err
		}
		if so.stop() {
			return nil
		}
	}
	// A last stretch of calls without faults: what went wrong in the last
	// episode shows on a connection that stays up.
	cool := 10 * time.Second
	if so.o.quick {
		cool = 5 * time.Second
	}
	if sleepCtx(ctx, cool) != nil {
		return ctx.Err()
	}
	stopDriving()
	<-driven
	return so.finish()
}

// episode applies the picked faults together, holds them, clears them.
func (so *soak) episode(ctx context.Context, n int, picked []int, usable []*fault, hold time.Duration) error {
	r, rec, s := so.r, so.rec, so.s
	ep := episode{n: n, from: time.Since(s.started)}
	fc := &faultCtx{r: r, d: so.d, rng: rand.New(rand.NewPCG(so.o.seed, uint64(1000+n))), n: n}
	var clears []func()
	blocks := false
	for _, i := range picked {
		f := usable[i]
		rec.note("fault-on", "", "#"+strconv.Itoa(n), f.name)
		clear, detail, err := f.apply(fc)
		if err != nil {
			return fmt.Errorf("fault %s: %w", f.name, err)
		}
		s.injected[f.name]++
		blocks = blocks || f.blocks
		ep.faults = append(ep.faults, f.name+" ("+detail+")")
		if clear != nil {
			clears = append(clears, clear)
		}
	}
	if sleepCtx(ctx, hold) != nil {
		return ctx.Err()
	}
	for i := len(clears) - 1; i >= 0; i-- {
		clears[i]()
	}
	if blocks {
		rec.pathCleared(time.Now())
	}
	ep.to = time.Since(s.started)
	rec.note("fault-off", "", "#"+strconv.Itoa(n), strings.Join(ep.faults, " + "))
	s.episodes = append(s.episodes, ep)
	if so.o.out != nil && !so.o.quick {
		fmt.Fprintf(so.o.out, "%7.1fs episode %d: %s\n", ep.from.Seconds(), n, strings.Join(ep.faults, " + "))
	}
	return nil
}

// watch checks, every second, for calls the node owes on open connections
// and keeps the peak memory.
func (so *soak) watch(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		so.rec.checkStale(time.Now(), so.o.callTimeout+so.o.slack)
		if smp, err := so.r.sample(); err == nil && smp.RSS > so.peak.Load() {
			so.peak.Store(smp.RSS) // only watch stores
		}
	}
}

// rest pauses the calls and waits until the node is registered, has
// answered what it owes, and its resources are back within the margins of
// the baseline (once there is one). It returns the resources at rest.
func (so *soak) rest() (sample, error) {
	so.d.paused.Add(1)
	defer so.d.paused.Add(-1)
	rec := so.rec
	if !rec.wait(time.Now().Add(so.o.settle), func() bool { _, ok := rec.registeredConnLocked(); return ok }) {
		rec.violate(fmt.Sprintf("the node did not register again within %s of the faults clearing", so.o.settle), "", "")
		return sample{}, nil
	}
	limit := so.o.callTimeout + so.o.slack
	if !rec.wait(time.Now().Add(limit), func() bool { return rec.outstandingLocked() == 0 }) {
		rec.checkStale(time.Now(), limit)
		return sample{}, nil
	}
	deadline := time.Now().Add(so.o.settle)
	var last sample
	var over []string
	for {
		smp, err := so.r.sample()
		if err != nil {
			return smp, err
		}
		last = smp
		if so.s.baseline.RSS == 0 {
			// The baseline: the least of a few readings, once no call is in flight.
			last = so.settleBaseline(smp)
			return last, nil
		}
		if over = defaultMargins.within(so.s.baseline, smp); len(over) == 0 {
			return smp, nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // polling the daemon's state, with a deadline
	}
	what := fmt.Sprintf("resources did not return to the baseline within %s of the faults clearing (margins: %s): %s; now %s, baseline %s",
		so.o.settle, defaultMargins, strings.Join(over, ", "), last, so.s.baseline)
	if last.Children > so.s.baseline.Children {
		var procs []string
		for _, p := range working(so.r.pid) {
			procs = append(procs, fmt.Sprintf("%d: %s", p, cmdline(p)))
		}
		slices.Sort(procs)
		what += "; processes below the daemon now: " + strings.Join(procs, "; ")
	}
	rec.violate(what, "", "")
	return last, nil
}

// settleBaseline takes the baseline at rest: the least of a few readings.
// Its child processes are counted only in a reading where no run of the
// soak's plugins is under way: an async worker still posting its callback,
// or a static refresh, ends on its own, and counted into the baseline it
// would let a process leaked later pass unseen. Such a reading is waited
// for up to the settle time.
func (so *soak) settleBaseline(first sample) sample {
	b, quiet := first, first.Runs == 0
	deadline := time.Now().Add(so.o.settle)
	for n := 0; n < 4 || (!quiet && time.Now().Before(deadline)); n++ {
		time.Sleep(500 * time.Millisecond) // a few readings at rest
		smp, err := so.r.sample()
		if err != nil {
			break
		}
		b.RSS, b.Files = min(b.RSS, smp.RSS), min(b.Files, smp.Files)
		if smp.Goroutines >= 0 && (b.Goroutines < 0 || smp.Goroutines < b.Goroutines) {
			b.Goroutines = smp.Goroutines
		}
		switch {
		case smp.Runs > 0:
		case !quiet:
			b.Children, b.Runs, quiet = smp.Children, 0, true
		default:
			b.Children = min(b.Children, smp.Children)
		}
	}
	return b
}

// finish lets the last calls and callbacks land, then checks the
// callbacks and takes the final figures.
func (so *soak) finish() error {
	s, rec := so.s, so.rec
	final, err := so.rest()
	if err != nil {
		return err
	}
	s.final = final
	if so.stop() {
		return nil
	}
	// Callbacks: every one the node accepted must arrive, also when it went
	// out on a connection that died silently.
	deadline := time.Now().Add(so.o.settle)
	var accepted []acceptedCB
	for {
		accepted, err = so.r.readAccepted()
		if err != nil {
			return err
		}
		if rec.deliveredCount() >= len(accepted) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // polling the async plugins' record, with a deadline
	}
	s.accepted, s.delivered = len(accepted), rec.deliveredCount()
	s.resent = rec.checkCallbacks(accepted)
	s.reregister, s.unreg, _ = rec.reconnectTimes()
	s.peakRSS = so.peak.Load()
	s.memHits, s.memKills = so.r.memLimitHits.Load(), so.r.memOOMKills.Load()
	if hwm, _ := procStatusBytes(so.r.pid, "VmHWM"); hwm > s.peakRSS {
		s.peakRSS = hwm
	}
	so.stop()
	return nil
}

type acceptedCB struct {
	seq  int
	task string
}

// readAccepted reads the async plugins' record of accepted callbacks, in
// the order the node accepted them.
func (r *rig) readAccepted() ([]acceptedCB, error) {
	f, err := os.Open(filepath.Join(r.asyncDir, "accepted"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []acceptedCB
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seq, task, ok := strings.Cut(sc.Text(), " ")
		if n, err := strconv.Atoi(seq); ok && err == nil {
			out = append(out, acceptedCB{seq: n, task: task})
		}
	}
	return out, sc.Err()
}

// logTail is the end of the daemon's log, for error messages.
func (r *rig) logTail() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	b, _ := os.ReadFile(r.logPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
