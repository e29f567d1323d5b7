package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Warm interpreters: for a plugin whose command runs python on a script, a
// small pool of interpreters is started ahead of the calls, each exactly as
// a cold run starts (the plugin's folder, environment, sandbox profile and
// a process tree of its own; a per-process temporary directory, so a call
// still gets one nobody else had). Each waits in a bootstrap; a call hands
// it its stdin, and it runs the script once and exits like a cold run. A
// new one is started behind it. A call that finds no waiting interpreter
// runs cold; nothing waits for one.

// MaxWarmSize bounds WarmConfig.Size.
const MaxWarmSize = 4

// warmMaxFailures is how many interpreters in a row may end before a call
// took them (crashed, refused, failed to start) before the pool gives up
// and the plugin runs cold.
const warmMaxFailures = 3

// warmRefillWait is the longest a taken interpreter's successor waits for
// it to end before starting.
const warmRefillWait = 2 * time.Second

// errWarmDropped is why a waiting interpreter is stopped.
var errWarmDropped = errors.New("warm pool dropped")

// WarmConfig chooses the plugins that keep interpreters waiting.
type WarmConfig struct {
	// Languages warms every plugin in one of them (WarmLanguages).
	Languages []string
	// Tools overrides Languages per plugin: true warms it, false never.
	Tools map[string]bool
	// Size is how many interpreters wait per plugin, 1 to MaxWarmSize
	// (0 is 1).
	Size int
	// Preload names, per plugin, the modules each waiting Python
	// interpreter imports before it waits (PreloadProblem checks them).
	Preload map[string][]string
}

// selects reports whether cfg wants name warm, and whether by name.
func (cfg WarmConfig) selects(name, lang string) (want, named bool) {
	if v, ok := cfg.Tools[name]; ok {
		return v, true
	}
	return lang != "" && slices.Contains(cfg.Languages, lang), false
}

// Warm makes the host's warm pools those set and cfg call for. Every pool
// of an earlier call is dropped first, whatever changed (the plugin's
// environment, its sandbox profile, the interpreter): its waiting
// interpreters exit before Warm returns. New pools start filling in the
// background. A nil set drops every pool. It returns a line for each
// plugin cfg names that runs cold instead, and why.
func (h *Host) Warm(set *Set, cfg WarmConfig) []string {
	size := min(max(cfg.Size, 1), MaxWarmSize)
	next := map[*runSpec]*pool{}
	var notes []string
	if set != nil {
		for _, t := range set.Tools {
			pt, ok := t.(*pluginTool)
			if !ok {
				continue
			}
			lang := warmLanguage(pt.run)
			want, named := cfg.selects(pt.spec.Name, lang)
			if !want {
				continue
			}
			preload := cfg.Preload[pt.spec.Name]
			if len(preload) > 0 && lang != WarmPython {
				notes = append(notes, fmt.Sprintf("plugin %q: preload is for Python plugins; it is ignored", pt.spec.Name))
				preload = nil
			}
			var l launch
			reason := "warm interpreters need a Unix system"
			if runtime.GOOS != "windows" {
				l, reason = h.warmLaunch(pt.run, lang, preload)
			}
			if reason != "" {
				if named || lang != "" {
					notes = append(notes, fmt.Sprintf("plugin %q runs cold, not warm: %s", pt.spec.Name, reason))
				}
				continue
			}
			pl := &pool{h: h, spec: pt.run, launch: l, size: size, drain: !pt.async}
			pl.ctx, pl.cancel = context.WithCancel(h.ctx)
			next[pt.run] = pl
		}
	}
	sort.Strings(notes)
	h.warmMu.Lock()
	old := h.pools
	h.pools = next
	h.warmMu.Unlock()
	for _, pl := range old {
		pl.close()
	}
	for _, pl := range next {
		pl.fill()
	}
	return notes
}

// WarmWaiting is how many interpreters wait for a call, over every pool.
func (h *Host) WarmWaiting() int {
	h.warmMu.Lock()
	pools := make([]*pool, 0, len(h.pools))
	for _, pl := range h.pools {
		pools = append(pools, pl)
	}
	h.warmMu.Unlock()
	n := 0
	for _, pl := range pools {
		pl.mu.Lock()
		n += len(pl.idle)
		pl.mu.Unlock()
	}
	return n
}

// WarmCalls is how many calls a warm interpreter ran, for metrics.
func (h *Host) WarmCalls() uint64 { return h.warmCalls.Load() }

// WarmPool is one plugin's warm pool as status shows it.
type WarmPool struct {
	Plugin  string
	Waiting int // interpreters waiting for a call now
	Size    int // how many the pool keeps waiting
	// Cold: interpreters kept ending before a call took them, so the pool
	// gave up and the plugin runs cold.
	Cold bool
}

// WarmPools are the host's warm pools, by plugin name.
func (h *Host) WarmPools() []WarmPool {
	h.warmMu.Lock()
	pools := make([]*pool, 0, len(h.pools))
	for _, pl := range h.pools {
		pools = append(pools, pl)
	}
	h.warmMu.Unlock()
	out := make([]WarmPool, 0, len(pools))
	for _, pl := range pools {
		pl.mu.Lock()
		out = append(out, WarmPool{Plugin: pl.spec.name, Waiting: len(pl.idle), Size: pl.size, Cold: pl.off})
		pl.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b WarmPool) int { return strings.Compare(a.Plugin, b.Plugin) })
	return out
}

// Calls is how many plugin processes run a call (asynchronous ones still
// working after their answer included): Running without the interpreters
// waiting for a call, which are no call yet.
func (h *Host) Calls() int { return max(h.Running()-h.WarmWaiting(), 0) }

// takeWarm hands over a waiting interpreter for spec, or nil.
func (h *Host) takeWarm(spec *runSpec) *process {
	h.warmMu.Lock()
	pl := h.pools[spec]
	h.warmMu.Unlock()
	if pl == nil || h.ctx.Err() != nil {
		return nil
	}
	return pl.take()
}

// pool keeps up to size interpreters of one plugin waiting.
type pool struct {
	h      *Host
	spec   *runSpec
	launch launch
	size   int
	drain  bool // the process's drainOnExit: a synchronous plugin

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the goroutine of each interpreter not yet taken

	mu       sync.Mutex
	idle     []*waiting
	starting int
	failures int // interpreters in a row that ended before a call took them
	off      bool
	closed   bool // close was called: nothing more starts
}

// waiting is one interpreter of a pool; taken is closed when a call took it.
type waiting struct {
	p     *process
	taken chan struct{}
}

// close drops the pool: every waiting interpreter exits (stdin closed; it
// is stopped if it does not within the kill grace) and is reaped before
// close returns. Interpreters already taken belong to their calls.
func (pl *pool) close() {
	pl.mu.Lock()
	pl.closed = true // no goroutine is added once Wait may run
	pl.mu.Unlock()
	pl.cancel()
	pl.wg.Wait()
}

// fill starts interpreters until size are waiting or starting.
func (pl *pool) fill() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.off || pl.closed || pl.ctx.Err() != nil {
		return
	}
	for n := pl.size - len(pl.idle) - pl.starting; n > 0; n-- {
		pl.starting++
		pl.wg.Go(pl.run)
	}
}

// take removes a live waiting interpreter from the pool and starts its
// successor; nil when none waits.
func (pl *pool) take() *process {
	pl.mu.Lock()
	var w *waiting
	for i, c := range pl.idle {
		if !isClosed(c.p.exited) { // an ended one is its goroutine's to clean up
			w = c
			pl.idle = slices.Delete(pl.idle, i, i+1)
			break
		}
	}
	if w == nil {
		pl.mu.Unlock()
		return nil
	}
	pl.failures = 0
	close(w.taken)
	if pl.closed {
		pl.mu.Unlock()
		return w.p
	}
	// The successor starts once this call's run is finished, its process
	// reaped and its output read (or after warmRefillWait, for a process
	// that keeps running): started sooner it would take the CPU from the
	// call it is meant to speed up, while the call's result is delivered.
	defer pl.mu.Unlock()
	pl.wg.Go(func() {
		wait := time.NewTimer(warmRefillWait)
		defer wait.Stop()
		select {
		case <-w.p.finished:
		case <-wait.C:
		case <-pl.ctx.Done():
		}
		pl.fill()
	})
	return w.p
}

// run starts one interpreter, waits until it is ready, and owns it until a
// call takes it; if it ends first, or the pool is dropped, it is cleaned
// up here (and, after a crash, replaced).
func (pl *pool) run() {
	h := pl.h
	w, err := pl.spawn()
	pl.mu.Lock()
	pl.starting--
	pl.mu.Unlock()
	if err != nil {
		pl.failed(err)
		return
	}
	pl.mu.Lock()
	if pl.ctx.Err() != nil {
		pl.mu.Unlock()
		pl.dismiss(w.p)
		return
	}
	pl.idle = append(pl.idle, w)
	pl.mu.Unlock()

	select {
	case <-w.taken:
		return
	case <-w.p.exited:
	case <-pl.ctx.Done():
	}
	pl.mu.Lock()
	i := slices.Index(pl.idle, w)
	if i >= 0 {
		pl.idle = slices.Delete(pl.idle, i, i+1)
	}
	pl.mu.Unlock()
	if i < 0 { // a call took it meanwhile
		return
	}
	crashed := isClosed(w.p.exited)
	pl.dismiss(w.p)
	if crashed && pl.ctx.Err() == nil {
		h.log.Warn().Str("plugin", pl.spec.name).Int("pid", w.p.pid).Str("exit", w.p.exitText()).
			Msg("a warm interpreter ended while waiting for a call; starting another")
		pl.failed(nil)
	}
}

// failed counts an interpreter that ended before a call took it and starts
// another, or gives up after warmMaxFailures in a row.
func (pl *pool) failed(err error) {
	pl.mu.Lock()
	pl.failures++
	preload := errors.Is(err, errWarmPreload)
	giveUp := pl.failures >= warmMaxFailures || preload || errors.Is(err, errWarmRefused) || errors.Is(err, ErrClosed)
	if giveUp && !pl.off && pl.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
		msg := "warm interpreters for this plugin keep failing; its calls run cold"
		if preload {
			msg = "a module of this plugin's preload cannot be imported; its calls run cold"
		}
		pl.h.log.Warn().Str("plugin", pl.spec.name).AnErr("error", err).Msg(msg)
	}
	pl.off = pl.off || giveUp
	pl.mu.Unlock()
	pl.fill()
}

// errWarmRefused: the bootstrap cannot run in this interpreter (too old).
var errWarmRefused = errors.New("the interpreter is too old for a warm start")

// errWarmPreload: a module of the plugin's preload cannot be imported.
var errWarmPreload = errors.New("preload failed")

// spawn starts an interpreter and waits for its bootstrap to be ready: one
// byte on a pipe that is the child's fd 3, or the first byte of its stdout.
func (pl *pool) spawn() (*waiting, error) {
	h := pl.h
	if err := h.track(); err != nil {
		return nil, err
	}
	var readyR, readyW *os.File
	if !pl.launch.readyOnStdout {
		var err error
		if readyR, readyW, err = os.Pipe(); err != nil {
			h.untrack()
			return nil, err
		}
	}
	p, err := h.spawn(pl.spec, pl.launch, true, readyW)
	if readyW != nil {
		readyW.Close() // the child has its copy: EOF once it is closed there
	}
	if err != nil {
		if readyR != nil {
			readyR.Close()
		}
		h.untrack()
		return nil, fmt.Errorf("start warm plugin %q: %w", pl.spec.name, err)
	}
	h.started.Add(1)
	p.drainOnExit = pl.drain
	p.errOut.max, p.errOut.tailMax = maxStderrBytes, stderrTailBytes
	go p.wait()
	go func() {
		defer close(p.stderrDone)
		_ = p.errOut.readFrom(p.stderr)
	}()
	from := readyR
	if from == nil {
		from = p.stdout // a read deadline ends it once the process exits (finish)
	}
	ready := make(chan byte, 1)
	go func() {
		var b [1]byte
		if n, _ := from.Read(b[:]); n == 1 {
			ready <- b[0]
		}
		close(ready)
	}()
	var got byte
	select {
	case got = <-ready:
	case <-pl.ctx.Done():
	}
	if got != warmReady {
		pl.dismiss(p)
		if readyR != nil {
			readyR.Close() // a descendant may hold fd 3: do not wait for it
		}
		<-ready
		switch {
		case got == warmRefused:
			return nil, errWarmRefused
		case got == warmPreloadFailed:
			return nil, fmt.Errorf("warm plugin %q: %w: %s", pl.spec.name, errWarmPreload, firstLine(p.errOut.buf))
		case pl.ctx.Err() != nil:
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("warm plugin %q ended before it was ready: %s: %s", pl.spec.name, p.exitText(),
			firstLine(p.errOut.buf))
	}
	if readyR != nil {
		readyR.Close()
	}
	return &waiting{p: p, taken: make(chan struct{})}, nil
}

// dismiss ends an interpreter no call took: its stdin is closed, which the
// bootstrap takes as "exit", and it is stopped if it has not exited within
// the kill grace; then it is reaped and retired like any run.
func (pl *pool) dismiss(p *process) {
	h := pl.h
	_ = p.stdin.Close()
	close(p.stdinDone)
	close(p.stdoutDone) // nobody reads it: a call never came
	grace := time.NewTimer(h.killGrace(ErrClosed))
	select {
	case <-p.exited:
	case <-grace.C:
		h.stop(p, errWarmDropped)
	}
	grace.Stop()
	h.finish(p)
	h.retire(p)
}

// firstLine is the first line of b, for an error message.
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
