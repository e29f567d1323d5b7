// Package proctree finds and stops every process started for one job (a
// plugin run, a helper), whatever those processes do to their session or
// process group: a grandchild that calls setsid, double-forks and ignores
// SIGTERM is still found and killed.
//
// How, by platform (Mode):
//   - Linux with a writable cgroup v2 (the daemon's own cgroup delegated to
//     it, e.g. systemd's Delegate=yes, or root): ModeCgroup, one cgroup per
//     tree, created below the daemon's own; the leader is cloned straight
//     into it (CLONE_INTO_CGROUP), so nothing it starts can leave it. It is
//     stopped with cgroup.kill (or freeze, SIGKILL each, thaw on kernels
//     before 5.14).
//   - Linux otherwise: ModeSubreaper. The daemon makes itself a child
//     subreaper (PR_SET_CHILD_SUBREAPER), so orphans of its trees are
//     re-parented to it instead of init, and walks /proc: a tree is its
//     leader, every process whose parent chain reaches a member, whatever
//     shares the leader's process group or a member's session, and every
//     orphan adopted by the daemon whose environment carries the tree's
//     marker (Tree.Env). Killing stops every member with SIGSTOP and walks
//     again until nothing new appears (so nothing forks past the walk), then
//     sends SIGKILL. The subreaper flag is process-wide; see Manager.
//   - Other Unix systems (macOS, BSD): ModeProcessGroup, the leader's
//     process group only. A descendant that leaves the group (setsid) is not
//     found; those systems have neither cgroups nor a subreaper.
//   - Windows: ModeJobObject, one Job Object per tree. The leader is
//     created suspended and resumed once it is in the job, so everything it
//     starts is in the job too; killing terminates the job. Windows has no
//     SIGTERM for processes without a console of their own, so Signal only
//     acts on SIGKILL and Kill terminates at once, without the grace.
package proctree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Mode is how a Manager finds the processes of a tree.
type Mode int

// Modes; ModeAuto picks the best the platform and permissions allow.
const (
	ModeAuto Mode = iota
	ModeCgroup
	ModeSubreaper
	ModeProcessGroup
	ModeJobObject
)

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeCgroup:
		return "cgroup"
	case ModeSubreaper:
		return "subreaper"
	case ModeProcessGroup:
		return "process-group"
	case ModeJobObject:
		return "job-object"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// EnvMarker is the environment variable that marks a tree's processes
// (ModeSubreaper uses it to claim orphans it adopted).
const EnvMarker = "VCPNODE_PROCTREE"

// pollEvery is how often Kill checks whether a tree emptied.
const pollEvery = 10 * time.Millisecond

// killReserve is the most Kill waits after SIGKILL for the tree to empty.
const killReserve = time.Second

// ErrUnsupported: the platform cannot track process trees (neither Unix nor Windows).
var ErrUnsupported = errors.New("process trees need a Unix or Windows system")

// Options configure a Manager.
type Options struct {
	// Mode forces a mode (tests, diagnostics); ModeAuto picks the best
	// available. A forced mode the system cannot give is an error.
	Mode Mode
	// Log receives mode changes and cleanup problems.
	Log zerolog.Logger
}

// Manager creates trees. In ModeSubreaper it also owns the goroutine that
// walks /proc and reaps adopted orphans: it only ever reaps processes it
// identified as members of its trees, so exec.Cmd.Wait (or os.Process.Wait)
// of the daemon's other children is never disturbed. An adopted orphan that
// exits before any walk saw it is left a zombie (it holds no memory, only a
// pid) until the daemon exits.
type Manager struct {
	log zerolog.Logger
	id  string // unique among live daemons: DaemonTag and a start stamp
	seq atomic.Uint64

	mu   sync.Mutex
	mode Mode
	plat platform // per-mode state (cgroup root, reaper)
}

// New returns a Manager in opts.Mode, or the best mode available.
func New(opts Options) (*Manager, error) {
	m := &Manager{
		log: opts.Log,
		id:  DaemonTag() + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36),
	}
	mode, plat, err := pickMode(m, opts.Mode)
	if err != nil {
		return nil, err
	}
	m.mode, m.plat = mode, plat
	m.log.Debug().Str("mode", mode.String()).Msg("process tree tracking")
	return m, nil
}

// Mode is the mode new trees get.
func (m *Manager) Mode() Mode {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mode
}

// Close stops the Manager's background work (the ModeSubreaper walker).
// Trees still alive are not touched; kill them first. The subreaper flag,
// being process-wide, stays set.
func (m *Manager) Close() {
	m.mu.Lock()
	p := m.plat
	m.mu.Unlock()
	p.close()
}

// NewTree prepares a tree for one job; start its leader with SysProcAttr
// and Env, then call Started (or Release if the start failed).
func (m *Manager) NewTree() (*Tree, error) {
	m.mu.Lock()
	p, mode := m.plat, m.mode
	m.mu.Unlock()
	id := m.id + "-" + strconv.FormatUint(m.seq.Add(1), 10)
	b, err := p.newTree(id)
	if err != nil {
		return nil, fmt.Errorf("process tree: %w", err)
	}
	return &Tree{m: m, id: id, mode: mode, b: b}, nil
}

// newPreparedTree is NewTree followed by prepare (nil: none).
func (m *Manager) newPreparedTree(prepare func(*Tree) error) (*Tree, error) {
	t, err := m.NewTree()
	if err != nil || prepare == nil {
		return t, err
	}
	if err := prepare(t); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// StartProcess starts name as the leader of a new tree (attr.Sys is
// replaced by the tree's, but for the command line on Windows; attr.Env
// gets the marker). When the system refuses
// to start a process into a cgroup, the Manager falls back to
// ModeSubreaper for good, with a warning, and starts it that way.
func (m *Manager) StartProcess(name string, argv []string, attr *os.ProcAttr) (*os.Process, *Tree, error) {
	return m.StartProcessWith(nil, name, argv, attr)
}

// StartProcessWith is StartProcess with prepare called on each new tree
// before its leader starts (the retry's too): what must be in force from
// the leader's first instruction, such as its cgroup's limits. An error
// from prepare releases the tree and ends the start.
func (m *Manager) StartProcessWith(prepare func(*Tree) error, name string, argv []string, attr *os.ProcAttr) (*os.Process, *Tree, error) {
	t, err := m.newPreparedTree(prepare)
	if err != nil {
		return nil, nil, err
	}
	a := *attr
	a.Env = withMarker(attr.Env, t)
	a.Sys = withCallerSys(t.SysProcAttr(), attr.Sys)
	proc, err := os.StartProcess(name, argv, &a)
	if err == nil {
		t.Started(proc.Pid)
		if serr := t.startError(); serr != nil {
			_, _ = proc.Wait() // killed by started; release its handle
			t.Release()
			return nil, nil, serr
		}
		return proc, t, nil
	}
	t.Release()
	if t.mode != ModeCgroup || notTheCgroup(err) {
		return nil, nil, err
	}
	// Retry without the cgroup: if that works, the cgroup was the problem.
	if derr := m.demote(); derr != nil {
		return nil, nil, err
	}
	t, terr := m.newPreparedTree(prepare)
	if terr != nil {
		return nil, nil, errors.Join(err, terr)
	}
	a.Env = withMarker(attr.Env, t)
	a.Sys = withCallerSys(t.SysProcAttr(), attr.Sys)
	proc, err2 := os.StartProcess(name, argv, &a)
	if err2 != nil {
		t.Release()
		return nil, nil, err2
	}
	m.log.Warn().Err(err).Str("mode", m.Mode().String()).
		Msg("cannot start processes in their own cgroup; tracking process trees by walking /proc instead")
	t.Started(proc.Pid)
	return proc, t, nil
}

// Environ is env as StartProcess gives it to t's leader: with t's marker
// in place of any inherited one. A leader started for one command and
// handed another (the sandbox's waiting launchers) execs it with this.
func (t *Tree) Environ(env []string) []string { return withMarker(env, t) }

// withMarker is env with t's marker in place of any inherited one.
func withMarker(env []string, t *Tree) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, EnvMarker+"=") {
			out = append(out, kv)
		}
	}
	return append(out, t.Env())
}

// demote switches new trees from ModeCgroup to ModeSubreaper.
func (m *Manager) demote() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mode != ModeCgroup {
		return nil
	}
	mode, plat, err := pickMode(m, ModeSubreaper)
	if err != nil {
		return err
	}
	old := m.plat
	m.mode, m.plat = mode, plat
	go old.close()
	return nil
}

// Tree is the set of processes started for one job.
type Tree struct {
	m      *Manager
	id     string
	mode   Mode
	b      backend
	leader atomic.Int64
	once   sync.Once

	// A released tree's cgroup may already serve another tree (they are
	// pooled): once released is set, nothing reaches the backend, and mu
	// keeps a kill or signal from running across the release.
	mu       sync.Mutex
	released bool
	// beforeRelease run once, before the cgroup goes (BeforeRelease).
	beforeRelease []func()
}

// backend is one mode's way of tracking a tree.
type backend interface {
	sysProcAttr() *syscall.SysProcAttr
	started(pid int)
	// signal sends sig to every live member it finds.
	signal(sig syscall.Signal)
	// alive reports whether any member is still running (zombies excluded
	// where the system lets us tell).
	alive() bool
	// killAll sends SIGKILL to every member, including ones forked while it runs.
	killAll()
	// reap collects members that are zombies of the daemon (adopted orphans).
	reap()
	release()
}

// Mode is how this tree is tracked.
func (t *Tree) Mode() Mode { return t.mode }

// SysProcAttr is what the leader must be started with: its own process
// group, and in ModeCgroup its cgroup; in ModeJobObject it is created
// suspended and runs only once Started put it in the job, so Started must
// follow a successful start. Each call returns a fresh value.
func (t *Tree) SysProcAttr() *syscall.SysProcAttr { return t.b.sysProcAttr() }

// Env is the marker entry ("KEY=VALUE") to add to the leader's environment.
func (t *Tree) Env() string { return EnvMarker + "=" + t.id }

// Started records the leader's pid; call it right after the start. On
// Windows the leader was created suspended and runs only from here on (once
// it is in the tree's job); if it cannot be put there it is killed, with an
// error logged.
func (t *Tree) Started(pid int) {
	t.leader.Store(int64(pid))
	t.b.started(pid)
}

// startError is why Started had to kill the leader (ModeJobObject), or nil.
func (t *Tree) startError() error {
	if b, ok := t.b.(interface{ startError() error }); ok {
		return b.startError()
	}
	return nil
}

// Graceful reports whether Signal(SIGTERM) reaches the tree's processes, so
// a grace period before KillAll is worth waiting. False on Windows.
func (t *Tree) Graceful() bool { return t.mode != ModeJobObject }

// Leader is the pid given to Started (0 before).
func (t *Tree) Leader() int { return int(t.leader.Load()) }

// Signal sends sig to every process of the tree.
func (t *Tree) Signal(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.released {
		t.b.signal(sig)
	}
}

// Alive reports whether any process of the tree is still running.
func (t *Tree) Alive() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.released && t.b.alive()
}

// KillAll sends SIGKILL to every process of the tree, race-free against forks.
func (t *Tree) KillAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.released {
		t.b.killAll()
	}
}

// Kill stops the whole tree: SIGTERM, then SIGKILL to whatever is left
// after grace (or as soon as ctx ends), then it waits for the tree to
// empty. When ctx has a deadline the grace is shortened so that SIGKILL goes
// out with a quarter of the remaining time (at most killReserve) left for
// the kernel, and Kill returns by the deadline. Where SIGTERM does not exist
// (Graceful false) there is no grace.
func (t *Tree) Kill(ctx context.Context, grace time.Duration) error {
	if !t.Alive() {
		return nil
	}
	if !t.Graceful() {
		grace = 0
	}
	t.Signal(syscall.SIGTERM)
	reserve := killReserve
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		reserve = min(left/4, killReserve)
		grace = max(0, min(grace, left-reserve))
	}
	if waitGone(ctx, t, grace) {
		t.reap()
		return nil
	}
	return t.KillAndWait(reserve) // reaps too
}

// KillAndWait sends SIGKILL to every process of the tree at once and waits
// up to d for the tree to empty: for a leader that already exited, whose
// descendants get no grace.
func (t *Tree) KillAndWait(d time.Duration) error {
	if !t.Alive() {
		return nil
	}
	defer t.reap()
	t.KillAll()
	if !waitGone(context.Background(), t, d) {
		return fmt.Errorf("processes of the tree still alive %s after SIGKILL", d)
	}
	return nil
}

// reap collects the tree's members that are zombies of the daemon.
func (t *Tree) reap() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.released {
		t.b.reap()
	}
}

// waitGone polls t until it is empty (true), ctx ends or d passes (d < 0: no limit).
func waitGone(ctx context.Context, t *Tree, d time.Duration) bool {
	var limit <-chan time.Time
	if d >= 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		limit = timer.C
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for t.Alive() {
		select {
		case <-tick.C:
		case <-limit:
			return !t.Alive()
		case <-ctx.Done():
			return !t.Alive()
		}
	}
	return true
}

// Release forgets the tree (removes its cgroup). Call it once no process
// is left (Alive false), or after a failed start.
// A kill or signal after it does nothing (its cgroup may be another tree's).
func (t *Tree) Release() {
	t.once.Do(func() {
		t.mu.Lock()
		t.released = true
		last := t.beforeRelease
		t.beforeRelease = nil
		t.mu.Unlock()
		for _, f := range last {
			f()
		}
		t.b.release()
	})
}

// BeforeRelease has f run once by Release, before the tree's cgroup is
// removed: the last moment the cgroup's files (its event counters) can be
// read. On a released tree f runs at once.
func (t *Tree) BeforeRelease(f func()) {
	t.mu.Lock()
	if !t.released {
		t.beforeRelease = append(t.beforeRelease, f)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	f()
}

// CgroupDir is the tree's own cgroup v2 directory (ModeCgroup), else "".
func (t *Tree) CgroupDir() string {
	if b, ok := t.b.(interface{ cgroupDir() string }); ok {
		return b.cgroupDir()
	}
	return ""
}

// Containment says whether every process of a tree ends with the tree
// whatever it does (double fork, setsid, an empty environment…), given
// whether the processes run under a syscall filter that denies clone3;
// how says what holds them, or what gets out. For `sandbox check`.
func (m *Manager) Containment(noClone3 bool) (held bool, how string) {
	switch m.Mode() {
	case ModeCgroup:
		switch {
		case m.Fenced():
			return true, "a cgroup per call, in a cgroup namespace the kernel keeps its processes in (nsdelegate)"
		case noClone3:
			return true, "a cgroup per call, which the syscall filter (no clone3) and Landlock (no cgroup file writable) keep its processes in"
		}
		return false, "a cgroup per call, which a process can leave with clone3's CLONE_INTO_CGROUP: it then outlives its call"
	case ModeSubreaper:
		return false, "no cgroup of the daemon's own (give it one: systemd's Delegate=yes, or root): an orphan that leaves its session " +
			"and clears its environment between two walks of /proc outlives its call and the daemon"
	case ModeProcessGroup:
		return false, "process groups only: a process that calls setsid outlives its call"
	case ModeJobObject:
		return true, "a Job Object per call"
	}
	return false, "process trees are not tracked here"
}
