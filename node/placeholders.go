package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/placeholders"
)

// PlaceholderSource adds placeholder jobs built from the config (static
// plugins, say); it runs at New and on every Reload, after the tool sources.
// Problems that do not stop the other jobs are returned as warnings.
type PlaceholderSource func(cfg config.Config, log zerolog.Logger) (jobs []placeholders.Job, warnings []string, err error)

// WithPlaceholderSource adds a source of placeholder jobs re-run on every reload.
func WithPlaceholderSource(src PlaceholderSource) Option {
	return func(n *Node) { n.ph.sources = append(n.ph.sources, src) }
}

// placeholderFeed owns the node's placeholder store, which outlives
// sessions (each pushes from it), and the refresher that fills it while
// Run runs.
type placeholderFeed struct {
	store   *placeholders.Store
	pushes  atomic.Uint64 // update_static_placeholders frames sent, for metrics
	log     zerolog.Logger
	sources []PlaceholderSource
	// guard runs each source's run: the node's turns a panic into a fatal
	// stop of Run (fatal.go). nil: run it as it is.
	guard func(what string, f func())

	mu        sync.Mutex
	jobs      []placeholders.Job
	opts      placeholders.Options
	refresher *placeholders.Refresher // nil unless Run is running

	// trees holds every process of the [placeholders] commands (proctrees.go);
	// the node's, closed by its owner.
	trees *lazyTrees
}

func newPlaceholderFeed(log zerolog.Logger, trees *lazyTrees) *placeholderFeed {
	return &placeholderFeed{store: placeholders.NewStore(), log: log, trees: trees}
}

// fromSources lists the jobs of the WithPlaceholderSource sources.
func (f *placeholderFeed) fromSources(cfg config.Config, log zerolog.Logger) ([]placeholders.Job, []string, error) {
	var jobs []placeholders.Job
	var warnings []string
	for _, src := range f.sources {
		more, warn, err := src(cfg, log)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, more...)
		warnings = append(warnings, warn...)
	}
	return jobs, warnings, nil
}

// apply makes jobs the current set: at once while running, at start
// otherwise. It returns the keys that lost their source, which the server
// keeps until this node reconnects, and the jobs left out, as warnings for
// the caller to log.
func (f *placeholderFeed) apply(jobs []placeholders.Job, cfg config.PlaceholdersConfig) (removed []string, warnings []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = f.guarded(jobs)
	opts := placeholders.Options{MinInterval: cfg.MinInterval.D()}
	if f.refresher != nil && opts != f.opts {
		// A new minimum interval needs a new refresher; values stay in the store.
		f.refresher.Stop()
		f.refresher = placeholders.NewRefresher(f.store, f.log, opts)
	}
	f.opts = opts
	if f.refresher == nil {
		return nil, nil
	}
	return f.update()
}

func (f *placeholderFeed) update() (removed []string, warnings []string) {
	removed, err := f.refresher.Update(f.jobs)
	if err != nil {
		warnings = splitJoined(err)
	}
	return removed, warnings
}

// guarded wraps every job's source so that a panic in a run is a fatal
// stop, not a crash of the refresher's goroutine.
func (f *placeholderFeed) guarded(jobs []placeholders.Job) []placeholders.Job {
	if f.guard == nil {
		return jobs
	}
	out := make([]placeholders.Job, len(jobs))
	for i, j := range jobs {
		j.Source = guardedSource{Source: j.Source, guard: f.guard}
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

// start runs the current jobs until the returned function is called, which
// stops them and waits.
func (f *placeholderFeed) start() (stop func()) {
	f.mu.Lock()
	f.refresher = placeholders.NewRefresher(f.store, f.log, f.opts)
	_, warnings := f.update()
	f.mu.Unlock()
	for _, w := range warnings {
		f.log.Warn().Msg(w)
	}
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.refresher.Stop()
		f.refresher = nil
	}
}

// stats describes the running sources; none unless Run is running.
func (f *placeholderFeed) stats() []placeholders.JobStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refresher == nil {
		return nil
	}
	return f.refresher.Stats()
}

// applyPlaceholders is the reload step for placeholders: when keys lost
// their source, the node reconnects, since the server cannot delete a key
// but drops all of a node's keys when it disconnects.
func (n *Node) applyPlaceholders(st *settings) (reconnect bool, warnings []string) {
	removed, warnings := n.ph.apply(st.placeholderJobs, st.cfg.Placeholders)
	if len(removed) == 0 {
		return false, warnings
	}
	n.log.Info().Strs("placeholders", removed).
		Msg("placeholders removed by the reload; reconnecting, since the server forgets a node's placeholders only when it disconnects")
	return true, warnings
}

// Placeholders lists every placeholder this node feeds, sorted by key,
// and the sources feeding them.
func (n *Node) Placeholders() controlapi.PlaceholdersResponse {
	resp := placeholdersResponse(n.ph.store)
	for _, st := range n.ph.stats() {
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

func placeholdersResponse(store *placeholders.Store) controlapi.PlaceholdersResponse {
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

// EvaluatePlaceholders runs every placeholder source cfg defines once (its
// own, the static plugins of its plugin dirs, and sources as
// WithPlaceholderSource adds them), as a running node would at start, and
// returns the outcome with warnings: a one-shot check that needs no daemon.
// protected are the node's own files the config does not name (its own
// path, the credential), as WithProtectedFiles gives them to a daemon: no
// command may read them, whatever its profile grants.
func EvaluatePlaceholders(ctx context.Context, cfg config.Config, protected []string, log zerolog.Logger, sources ...PlaceholderSource) (controlapi.PlaceholdersResponse, []string, error) {
	if err := cfg.Validate(); err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	trees := &lazyTrees{log: log}
	defer trees.close() // deferred first, so it runs after the plugin host's close
	f := newPlaceholderFeed(log, trees)
	f.sources = sources
	sb, err := oneShotSandbox(cfg, protected, trees, log) // sandbox.go
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	jobs, err := configPlaceholderJobs(cfg, f.trees.get, sb)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, fmt.Errorf("placeholders: %w", err)
	}
	static, warnings, closeHost, err := scanStaticPlugins(cfg, trees, sb, log)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	defer closeHost()
	more, warn, err := f.fromSources(cfg, log)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, fmt.Errorf("placeholders: %w", err)
	}
	jobs = append(append(jobs, static...), more...)
	warnings = append(warnings, warn...)
	if err := placeholders.RefreshOnce(ctx, f.store, log, jobs); err != nil {
		warnings = append(warnings, splitJoined(err)...)
	}
	return placeholdersResponse(f.store), warnings, nil
}
