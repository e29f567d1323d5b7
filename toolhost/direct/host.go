package direct

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// Host runs the Node.js hosts of direct plugins, one process per plugin,
// and owns every one it started: Close stops them all.
type Host struct {
	opts Options
	log  zerolog.Logger

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	slots  map[string]*slot // by manifest path
	alive  sync.WaitGroup   // one per process not yet reaped
	active atomic.Int64

	started, kills, restarts atomic.Uint64

	trees     *proctree.Manager // nil when processes cannot be tracked here (treesErr)
	treesErr  error
	ownsTrees bool
}

// NewHost returns a Host with opts (zero fields take the defaults).
func NewHost(opts Options) *Host {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{opts: opts, log: opts.Log, ctx: ctx, cancel: cancel, slots: map[string]*slot{}, trees: opts.ProcessTrees}
	if h.trees == nil {
		h.trees, h.treesErr = proctree.New(proctree.Options{Log: opts.Log})
		h.ownsTrees = h.treesErr == nil
		if h.treesErr != nil {
			h.trees = nil
		}
	}
	return h
}

// Loaded is the outcome of one Load.
type Loaded struct {
	// Tools are the hybridservice plugins whose module came up, ready to register.
	Tools []toolhost.Tool
	// Services are the service plugins now running (they offer no tool).
	Services []plugin.Entry
	// Notices are plugins that run without something they offer (the HTTP
	// routes of a hybridservice).
	Notices []plugin.Entry
	// Unsupported are the plugins that cannot run here, each with why: no
	// Node.js, a module that does not load (its error's first line), a
	// service that needs HTTP routes, an initialize() that failed.
	Unsupported []plugin.Entry
}

// Load makes the running set match plugins: a plugin whose module, config,
// environment and script file are unchanged keeps its running host; a
// changed one is shut down (shutdown()) and then loaded again; one that is
// gone is shut down. New modules are loaded (initialize()) before Load
// returns. Load never fails as a whole: what cannot run is in Unsupported.
func (h *Host) Load(plugins []*plugin.DirectPlugin, set Settings) Loaded {
	var out Loaded
	node, nodeErr := resolveNode(set.Node)

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		for _, p := range plugins {
			out.Unsupported = append(out.Unsupported, entry(p, ErrClosed.Error()))
		}
		return out
	}
	keep := map[string]*slot{}
	var stale []*slot
	type job struct {
		p   *plugin.DirectPlugin
		key string
		mem int
		sb  string
	}
	var jobs []job
	for _, p := range plugins {
		if nodeErr != nil {
			continue
		}
		mem := set.MaxMemoryMB[p.Name]
		profile := h.opts.Sandbox.ProfileFor(p.Name)
		key := identity(p, node, mem, profile)
		if old := h.slots[p.Path]; old != nil && old.key == key {
			keep[p.Path] = old
			continue
		}
		jobs = append(jobs, job{p, key, mem, profile})
	}
	for path, s := range h.slots {
		if keep[path] == nil {
			stale = append(stale, s)
		}
	}
	h.slots = keep
	h.mu.Unlock()

	// shutdown() of the module being replaced runs before the new one's
	// initialize(): both may want the same port or bot session.
	stopAll(stale)

	if nodeErr != nil {
		for _, p := range plugins {
			out.Unsupported = append(out.Unsupported, entry(p, nodeErr.Error()))
		}
		return out
	}
	type launched struct {
		s   *slot
		p   *proc
		err error
	}
	results := make([]launched, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		s := newSlot(h, j.p, node, j.key, j.mem, j.sb)
		wg.Go(func() {
			p, err := s.launch()
			results[i] = launched{s, p, err}
		})
	}
	wg.Wait()

	h.mu.Lock()
	closed := h.closed
	for _, r := range results {
		if r.err != nil {
			r.s.cancel()
			continue
		}
		if closed { // Close ran meanwhile and did not see this slot
			r.p.kill(ErrClosed)
			r.s.cancel()
			continue
		}
		r.s.notice = r.p.notice
		h.slots[r.s.p.Path] = r.s
		r.s.loop.Add(1)
		go r.s.run(r.p)
	}
	current := make(map[string]*slot, len(h.slots))
	for k, v := range h.slots {
		current[k] = v
	}
	h.mu.Unlock()

	failed := map[string]error{}
	for _, r := range results {
		if r.err != nil {
			failed[r.s.p.Path] = r.err
		}
	}
	for _, p := range plugins {
		if err := failed[p.Path]; err != nil {
			out.Unsupported = append(out.Unsupported, entry(p, err.Error()))
			continue
		}
		s := current[p.Path]
		if s == nil {
			out.Unsupported = append(out.Unsupported, entry(p, ErrClosed.Error()))
			continue
		}
		if s.notice != "" {
			out.Notices = append(out.Notices, entry(p, s.notice))
		}
		if p.Answers() {
			out.Tools = append(out.Tools, &tool{s: s, spec: s.p.Spec})
		} else {
			out.Services = append(out.Services, entry(p, "running in its own Node.js host; a service plugin offers no tool"))
		}
	}
	return out
}

func entry(p *plugin.DirectPlugin, reason string) plugin.Entry {
	return plugin.Entry{Name: p.Name, Type: p.Type, Path: p.Path, Reason: reason}
}

// identity is what a running host was made from, including the size and
// time of its script files (moduleFiles), so a rescan reloads an edited
// module, and the name of its sandbox profile.
func identity(p *plugin.DirectPlugin, node string, mem int, profile string) string {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00", node, p.Type, mem, p.Dir, p.Script, p.Config, p.Name, profile)
	for _, kv := range p.Env {
		fmt.Fprintf(sum, "%s\x00", kv)
	}
	for _, f := range moduleFiles(p) {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(sum, "%s\x00%d\x00%d\x00", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	fmt.Fprintf(sum, "\x00%v", p.Spec)
	return hex.EncodeToString(sum.Sum(nil))
}

// moduleFiles are the files whose change reloads a module: its entry
// script and the JavaScript files beside it and at the top of its folder
// (not subfolders or node_modules, and no data files, which plugins write).
func moduleFiles(p *plugin.DirectPlugin) []string {
	files := []string{p.Script}
	dirs := []string{p.Dir}
	if d := filepath.Dir(p.Script); d != p.Dir {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries { // sorted by name
			switch filepath.Ext(e.Name()) {
			case ".js", ".mjs", ".cjs":
				if f := filepath.Join(dir, e.Name()); !e.IsDir() && f != p.Script {
					files = append(files, f)
				}
			}
		}
	}
	return files
}

func stopAll(slots []*slot) {
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(s.stop)
	}
	wg.Wait()
}

// track counts a host about to start; the returned function, called by
// the host's reaper before its done closes, uncounts it (so Running is
// exact as soon as a caller sees done).
func (h *Host) track() (untrack func()) {
	h.alive.Add(1)
	h.active.Add(1)
	return func() {
		h.active.Add(-1)
		h.alive.Done()
	}
}

// Running is how many Node.js host processes are running or not yet reaped.
func (h *Host) Running() int { return int(h.active.Load()) }

// Started is how many Node.js hosts were started (loads and restarts).
func (h *Host) Started() uint64 { return h.started.Load() }

// Kills is how many hosts were killed because a call outlived its deadline plus Grace.
func (h *Host) Kills() uint64 { return h.kills.Load() }

// Restarts is how many times a host that went away was brought back.
func (h *Host) Restarts() uint64 { return h.restarts.Load() }

// Close shuts every module down (shutdown(), then its process group after
// Grace) and waits until all hosts are reaped or ctx ends. Later Loads list
// everything as unsupported. It is safe to call more than once.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	var slots []*slot
	for _, s := range h.slots {
		slots = append(slots, s)
	}
	h.slots = map[string]*slot{}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() {
		stopAll(slots)
		h.cancel()
		h.alive.Wait()
		if h.ownsTrees {
			h.trees.Close()
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("Node.js plugin hosts still running at shutdown (%d): %w", h.Running(), context.Cause(ctx))
	}
}

// tool is a hybridservice plugin as a toolhost.Tool.
type tool struct {
	s    *slot
	spec toolhost.Spec
}

// Spec describes the plugin; it holds no folder, script, config or environment.
func (t *tool) Spec() toolhost.Spec { return t.spec }

// Invoke runs processToolCall(args, context) in the plugin's host. When ctx
// ends, the call's AbortSignal fires and Invoke returns at once; a call
// still running Grace later gets its host killed and restarted.
func (t *tool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	return t.s.call(ctx, call)
}
