package placeholders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Log field names.
const (
	logSource       = "source"
	logPlaceholders = "placeholders"
)

// ErrStopped is returned by Update after Stop.
var ErrStopped = errors.New("placeholder refresher stopped")

// Source produces values for the placeholders it declares. The node adapts
// VCP static plugins to it; this package has the config-defined ones.
type Source interface {
	// Name identifies the source in logs, status and claim errors, and
	// must be unique among the jobs of a refresher ("plugin Weather").
	Name() string
	// Placeholders lists the keys it feeds, braces optional. None means
	// the source runs for its side effects only.
	Placeholders() []string
	// Run produces one output. It must return soon after ctx is done.
	Run(ctx context.Context) (Output, error)
}

// Output is what one run of a source produced.
type Output struct {
	Text      string
	TimedOut  bool // cut by the source's own time limit; Text is what came before, and counts
	Truncated bool // Text was cut at the source's size limit
	Verbatim  bool // Text is the value of every placeholder as is, never a per-key JSON map
}

// Job is a source and when to run it.
type Job struct {
	Source   Source
	Schedule Schedule      // nil: only once, when the job starts
	Timeout  time.Duration // 0: only the source's own limits
	// Fingerprint describes everything else a run depends on (command,
	// schedule, manifest…). On Update, a running job with the same name,
	// placeholders and a non-empty equal fingerprint is left alone instead
	// of being restarted and re-run.
	Fingerprint string
}

// Options tune a Refresher.
type Options struct {
	MinInterval time.Duration // between run starts of one source; 0 = none
	Clock       Clock         // nil = the real clock
}

// JobStats describes one job for status output.
type JobStats struct {
	Name           string
	Placeholders   []string
	Runs           int // runs started
	SkippedBusy    int // fires that came while a run was still going
	SkippedTooSoon int // fires within MinInterval of the last start
	Running        bool
	LastStart      time.Time
	LastDuration   time.Duration
	LastError      string
	NextRun        time.Time // zero when the job has no further fire
}

// Refresher runs each job's source once when the job starts and then on its
// schedule, one run at a time per source, and writes the values to a Store.
type Refresher struct {
	store *Store
	log   zerolog.Logger
	opts  Options

	mu      sync.Mutex // serialises Update and Stop
	base    context.Context
	cancel  context.CancelFunc
	jobs    map[string]*runningJob
	order   []string // job names in the order given to the last Update
	stopped bool
}

// NewRefresher returns a refresher with no jobs; Update gives it some.
func NewRefresher(store *Store, log zerolog.Logger, opts Options) *Refresher {
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	base, cancel := context.WithCancel(context.Background())
	return &Refresher{store: store, log: log, opts: opts, base: base, cancel: cancel, jobs: map[string]*runningJob{}}
}

// Update makes jobs the refresher's whole set: new and changed jobs start
// (and run at once), removed ones stop, unchanged ones keep running. A job
// with a bad or already claimed key, or a name already used, is left out and
// reported in the error; the others still run. It returns the keys that had
// a value and are now fed by nobody, which the server keeps until this node
// reconnects.
func (r *Refresher) Update(jobs []Job) (removed []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil, ErrStopped
	}
	wanted, claims, errs := planJobs(jobs)

	for name, rj := range r.jobs {
		if w, ok := wanted[name]; ok && sameJob(rj, w) {
			continue
		}
		rj.cancel()
		<-rj.done
		delete(r.jobs, name)
	}
	removed = r.store.SetClaims(claims)

	r.order = r.order[:0]
	for i, j := range jobs {
		name := j.Source.Name()
		w, ok := wanted[name]
		if !ok || w.index != i {
			continue // left out, or a later job of a duplicate name
		}
		r.order = append(r.order, name)
		if _, running := r.jobs[name]; running {
			continue
		}
		ctx, cancel := context.WithCancel(r.base)
		rj := &runningJob{job: w.job, keys: w.keys, cancel: cancel, done: make(chan struct{})}
		rj.stats = JobStats{Name: name, Placeholders: w.keys}
		r.jobs[name] = rj
		r.log.Debug().Str(logSource, name).Strs(logPlaceholders, w.keys).Msg("placeholder source started")
		go r.loop(ctx, rj)
	}
	return removed, errors.Join(errs...)
}

// plannedJob is a job that passed planJobs, with its normalised keys.
type plannedJob struct {
	index int // in the jobs given to Update
	job   Job
	keys  []string
}

// planJobs checks names and keys; the first job to claim a key keeps it.
func planJobs(jobs []Job) (map[string]plannedJob, map[string]string, []error) {
	wanted := map[string]plannedJob{}
	claims := map[string]string{}
	var errs []error
	for i, j := range jobs {
		name := j.Source.Name()
		if _, dup := wanted[name]; dup {
			errs = append(errs, fmt.Errorf("placeholder source %q is defined twice; the second is ignored", name))
			continue
		}
		keys, err := jobKeys(j.Source, claims)
		if err != nil {
			errs = append(errs, fmt.Errorf("placeholder source %q not started: %w", name, err))
			continue
		}
		for _, k := range keys {
			claims[k] = name
		}
		wanted[name] = plannedJob{index: i, job: j, keys: keys}
	}
	return wanted, claims, errs
}

func jobKeys(src Source, claims map[string]string) ([]string, error) {
	var keys []string
	for _, raw := range src.Placeholders() {
		k, err := NormalizeKey(raw)
		if err != nil {
			return nil, err
		}
		if holder, ok := claims[k]; ok {
			return nil, &ClaimError{Key: k, Holder: holder, Claimant: src.Name()}
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

func sameJob(rj *runningJob, w plannedJob) bool {
	return rj.job.Fingerprint != "" && rj.job.Fingerprint == w.job.Fingerprint &&
		slices.Equal(rj.keys, w.keys)
}

// Stop stops every job, cancelling runs in progress, and waits for them.
func (r *Refresher) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.cancel()
	for _, rj := range r.jobs {
		<-rj.done
	}
}

// Stats describes every job, in the order of the last Update.
func (r *Refresher) Stats() []JobStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]JobStats, 0, len(r.order))
	for _, name := range r.order {
		if rj, ok := r.jobs[name]; ok {
			out = append(out, rj.snapshot())
		}
	}
	return out
}

// runningJob is a started job; loop owns everything but stats.
type runningJob struct {
	job    Job
	keys   []string
	cancel context.CancelFunc
	done   chan struct{} // closed when loop has returned

	statsMu sync.Mutex
	stats   JobStats
}

func (rj *runningJob) update(f func(*JobStats)) {
	rj.statsMu.Lock()
	defer rj.statsMu.Unlock()
	f(&rj.stats)
}

func (rj *runningJob) snapshot() JobStats {
	rj.statsMu.Lock()
	defer rj.statsMu.Unlock()
	st := rj.stats
	st.Placeholders = slices.Clone(st.Placeholders)
	return st
}

type runResult struct {
	out      Output
	err      error
	duration time.Duration
}

// loop is one job's scheduler. It starts runs in a goroutine it waits for,
// so that a fire during a run can be seen, skipped and counted.
func (r *Refresher) loop(ctx context.Context, rj *runningJob) {
	defer close(rj.done)
	clock := r.opts.Clock
	results := make(chan runResult, 1)
	running := false
	var lastStart time.Time
	var timer Timer

	start := func() {
		running = true
		lastStart = clock.Now()
		rj.update(func(st *JobStats) { st.Runs++; st.Running = true; st.LastStart = lastStart })
		go func() { results <- runJob(ctx, clock, rj.job) }()
	}
	arm := func() {
		timer = nil
		var next time.Time
		if rj.job.Schedule != nil {
			now := clock.Now()
			if next = rj.job.Schedule.Next(now); !next.IsZero() {
				timer = clock.NewTimer(next.Sub(now))
			}
		}
		rj.update(func(st *JobStats) { st.NextRun = next })
	}
	finish := func(res runResult) {
		running = false
		r.apply(ctx, rj, res)
	}

	start()
	arm()
	for {
		var fire <-chan time.Time
		if timer != nil {
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			if running {
				<-results // the run sees ctx too and returns soon
			}
			return
		case res := <-results:
			finish(res)
		case <-fire:
			// A run that ended at the same moment is not "busy".
			if running {
				select {
				case res := <-results:
					finish(res)
				default:
				}
			}
			r.fire(rj, running, lastStart, start)
			arm()
		}
	}
}

// fire decides what a schedule fire does: run, or skip and count why.
func (r *Refresher) fire(rj *runningJob, running bool, lastStart time.Time, start func()) {
	name := rj.job.Source.Name()
	switch {
	case running:
		rj.update(func(st *JobStats) { st.SkippedBusy++ })
		r.log.Debug().Str(logSource, name).Msg("placeholder source still running at its next fire; skipped")
	case r.opts.MinInterval > 0 && r.opts.Clock.Now().Sub(lastStart) < r.opts.MinInterval:
		rj.update(func(st *JobStats) { st.SkippedTooSoon++ })
		r.log.Debug().Str(logSource, name).Dur("min_interval", r.opts.MinInterval).
			Msg("placeholder source fired within its minimum interval; skipped")
	default:
		start()
	}
}

// runJob runs a job's source once within the job's timeout.
func runJob(ctx context.Context, clock Clock, job Job) runResult {
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, job.Timeout)
		defer cancel()
	}
	began := clock.Now()
	out, err := job.Source.Run(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no result within %s: %w", job.Timeout, err)
	}
	return runResult{out: out, err: err, duration: clock.Now().Sub(began)}
}

// apply writes one run's outcome to the store, then to the job's stats
// (so that a run shown as finished is in the store).
func (r *Refresher) apply(ctx context.Context, rj *runningJob, res runResult) {
	// A job stopped or replaced had its run cut short on purpose.
	if ctx.Err() == nil {
		applyOutcome(r.store, r.log, rj.job.Source, rj.keys, res)
	}
	errText := ""
	if res.err != nil {
		errText = res.err.Error()
	}
	rj.update(func(st *JobStats) { st.Running = false; st.LastDuration = res.duration; st.LastError = errText })
}
