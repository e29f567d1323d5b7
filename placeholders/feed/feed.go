package feed

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// Source adds placeholder jobs built from the config (static plugins, say);
// it runs at start and on every reload, after the tool sources. Problems
// that do not stop the other jobs are returned as warnings.
type Source func(cfg config.Config, log zerolog.Logger) (jobs []placeholders.Job, warnings []string, err error)

// Options is what a Feed runs its jobs with.
type Options struct {
	Log zerolog.Logger
	// Trees gives the process tree Manager that command placeholders run
	// their processes in; nil, or a nil Manager: process groups.
	Trees func() *proctree.Manager
	// Sandbox confines command placeholders under their profiles; nil:
	// unconfined.
	Sandbox *sandbox.Sandbox
	// Guard runs each source's run: the node's turns a panic into a fatal
	// stop. nil: run it as it is.
	Guard func(what string, f func())
	// Sources add jobs after the config's own and the static plugins'.
	Sources []Source
}

// Feed owns a placeholder store, which outlives hub sessions (each pushes
// from it), and the refresher that fills it between Start and its stop.
type Feed struct {
	store  *placeholders.Store
	pushes atomic.Uint64 // update_static_placeholders frames sent, for metrics
	opts   Options

	mu        sync.Mutex
	jobs      []placeholders.Job
	refOpts   placeholders.Options
	refresher *placeholders.Refresher // nil unless started
}

// New returns a Feed with an empty store and no jobs.
func New(opts Options) *Feed {
	return &Feed{store: placeholders.NewStore(), opts: opts}
}

// Store is the feed's store of current values.
func (f *Feed) Store() *placeholders.Store { return f.store }

// Pushes is the number of updates sent to the hub.
func (f *Feed) Pushes() uint64 { return f.pushes.Load() }

// Jobs is every placeholder job cfg implies, in the order that settles a
// key claimed twice (the first keeps it): the config's own, the static
// plugins of a scan, then the other sources.
func (f *Feed) Jobs(cfg config.Config, static []*plugin.StaticPlugin) ([]placeholders.Job, []string, error) {
	trees := f.opts.Trees
	if trees == nil {
		trees = func() *proctree.Manager { return nil }
	}
	jobs, err := configJobs(cfg, trees, f.opts.Sandbox)
	if err != nil {
		return nil, nil, err
	}
	more, warnings := staticPluginJobs(static, cfg.Plugins)
	jobs = append(jobs, more...)
	for _, src := range f.opts.Sources {
		more, warn, err := src(cfg, f.opts.Log)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, more...)
		warnings = append(warnings, warn...)
	}
	return jobs, warnings, nil
}

// Apply makes jobs the current set: at once while running, at start
// otherwise. It returns the keys that lost their source, which the server
// keeps until this node reconnects, and the jobs left out, as warnings for
// the caller to log.
func (f *Feed) Apply(jobs []placeholders.Job, cfg config.PlaceholdersConfig) (removed []string, warnings []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = f.guarded(jobs)
	opts := placeholders.Options{MinInterval: cfg.MinInterval.D()}
	if f.refresher != nil && opts != f.refOpts {
		// A new minimum interval needs a new refresher; values stay in the store.
		f.refresher.Stop()
		f.refresher = placeholders.NewRefresher(f.store, f.opts.Log, opts)
	}
	f.refOpts = opts
	if f.refresher == nil {
		return nil, nil
	}
	return f.update()
}

func (f *Feed) update() (removed []string, warnings []string) {
	removed, err := f.refresher.Update(f.jobs)
	if err != nil {
		warnings = splitJoined(err)
	}
	return removed, warnings
}

// guarded wraps every job's source so that a panic in a run is a fatal
// stop, not a crash of the refresher's goroutine.
func (f *Feed) guarded(jobs []placeholders.Job) []placeholders.Job {
	if f.opts.Guard == nil {
		return jobs
	}
	out := make([]placeholders.Job, len(jobs))
	for i, j := range jobs {
		j.Source = guardedSource{Source: j.Source, guard: f.opts.Guard}
		out[i] = j
	}
	return out
}

// guardedSource is a placeholder source run under the node's guard.
type guardedSource struct {
	placeholders.Source
	guard func(what string, f func())
}

func (g guardedSource) Run(ctx context.Context) (out placeholders.Output, err error) {
	err = errSourcePanicked
	g.guard("placeholder source "+g.Name(), func() { out, err = g.Source.Run(ctx) })
	return out, err
}

// errSourcePanicked is the run's error when its source panicked.
var errSourcePanicked = errors.New("the source failed (a fatal error; the node is stopping)")

// splitJoined lists the messages of an errors.Join.
func splitJoined(err error) []string {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// Start runs the current jobs until the returned function is called, which
// stops them and waits.
func (f *Feed) Start() (stop func()) {
	f.mu.Lock()
	f.refresher = placeholders.NewRefresher(f.store, f.opts.Log, f.refOpts)
	_, warnings := f.update()
	f.mu.Unlock()
	for _, w := range warnings {
		f.opts.Log.Warn().Msg(w)
	}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.refresher.Stop()
		f.refresher = nil
	}
}

// stats describes the running sources; none unless started.
func (f *Feed) stats() []placeholders.JobStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refresher == nil {
		return nil
	}
	return f.refresher.Stats()
}

// Status lists every placeholder the feed holds, sorted by key, and the
// sources feeding them.
func (f *Feed) Status() controlapi.PlaceholdersResponse {
	resp := storeStatus(f.store)
	for _, st := range f.stats() {
		s := controlapi.PlaceholderSourceStatus{
			Name: st.Name, Placeholders: st.Placeholders, Runs: st.Runs, SkippedBusy: st.SkippedBusy,
			SkippedTooSoon: st.SkippedTooSoon, Running: st.Running, LastDurationMs: st.LastDuration.Milliseconds(),
			LastError: st.LastError,
		}
		if !st.NextRun.IsZero() {
			s.NextRun = &st.NextRun
		}
		resp.Sources = append(resp.Sources, s)
	}
	return resp
}

func storeStatus(store *placeholders.Store) controlapi.PlaceholdersResponse {
	resp := controlapi.PlaceholdersResponse{Now: time.Now(), Placeholders: []controlapi.PlaceholderStatus{}}
	for _, e := range store.Entries() {
		ps := controlapi.PlaceholderStatus{Key: e.Key, Value: e.Value, HasValue: e.HasValue, Source: e.Source, LastError: e.LastError}
		if !e.UpdatedAt.IsZero() {
			ps.UpdatedAt = &e.UpdatedAt
		}
		if !e.ErrorAt.IsZero() {
			ps.ErrorAt = &e.ErrorAt
		}
		resp.Placeholders = append(resp.Placeholders, ps)
	}
	return resp
}
