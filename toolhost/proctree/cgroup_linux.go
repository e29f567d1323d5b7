package proctree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// cgroupPrefix names the cgroups a daemon creates below its own:
// vcpnode-<DaemonTag>-<stamp>-<n>.
const cgroupPrefix = "vcpnode-"

// freezeWait bounds the wait for a cgroup to report frozen (kernels
// without cgroup.kill).
const freezeWait = 2 * time.Second

// cgroupPlatform makes one cgroup per tree under dir, the daemon's own
// (rel is its path in /proc/self/cgroup).
type cgroupPlatform struct {
	dir, rel string
	log      zerolog.Logger
	// fence: each tree's leader starts in a cgroup namespace rooted at its
	// cgroup (fence_linux.go).
	fence bool
	// leafWhy says what settleLeaf could not enable for the trees' cgroups.
	leafWhy string

	mu     sync.Mutex
	pool   []string // names of empty cgroups to reuse
	closed bool
}

// ownCgroupDir finds the daemon's cgroup v2 directory from /proc/self/cgroup
// and the cgroup2 mount in /proc/self/mountinfo; nsdelegate says whether
// that hierarchy makes cgroup namespaces delegation boundaries.
func ownCgroupDir() (dir, rel string, nsdelegate bool, err error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", false, err
	}
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = r, true
		}
	}
	if !found {
		return "", "", false, errors.New("no cgroup v2 membership in /proc/self/cgroup")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options [optional…] - fstype source super
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(right, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(left)
		if len(fields) < 5 {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		sub, ok := strings.CutPrefix(rel, root)
		if !ok || (sub != "" && root != "/" && !strings.HasPrefix(sub, "/")) {
			continue
		}
		super := strings.Fields(right) // cgroup2 SOURCE OPTIONS
		nsdelegate = len(super) > 2 && slices.Contains(strings.Split(super[2], ","), "nsdelegate")
		return filepath.Join(mnt, sub), rel, nsdelegate, nil
	}
	if err := sc.Err(); err != nil {
		return "", "", false, err
	}
	return "", "", false, errors.New("no cgroup2 file system mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space…).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// newCgroupPlatform checks that the daemon may create cgroups below its own
// and move processes there, and removes cgroups left by daemons that died.
func newCgroupPlatform(log zerolog.Logger) (*cgroupPlatform, error) {
	dir, rel, nsdelegate, err := ownCgroupDir()
	if err != nil {
		return nil, err
	}
	dir, rel = treesParent(dir, rel)
	// Starting a process into a child cgroup needs write access to the
	// common ancestor's cgroup.procs: ours.
	if err := syscall.Access(filepath.Join(dir, "cgroup.procs"), 2 /* W_OK */); err != nil {
		return nil, fmt.Errorf("cgroup %s is not writable (no delegation): %w", dir, err)
	}
	// A probe of its own: Managers made at once (a test binary's) would
	// otherwise remove each other's before it is read.
	probe := filepath.Join(dir, cgroupPrefix+DaemonTag()+"-probe-"+strconv.FormatUint(probes.Add(1), 10))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create a cgroup below %s: %w", dir, err)
	}
	_, killErr := os.Stat(filepath.Join(probe, "cgroup.kill"))
	_, freezeErr := os.Stat(filepath.Join(probe, "cgroup.freeze"))
	_ = os.Remove(probe)
	if killErr != nil && freezeErr != nil {
		return nil, fmt.Errorf("cgroup %s has neither cgroup.kill nor cgroup.freeze", dir)
	}
	p := &cgroupPlatform{dir: dir, rel: rel, log: log, fence: nsdelegate && canFence(), leafWhy: settleLeaf(dir)}
	if p.leafWhy != "" {
		log.Warn().Str("cgroup", dir).Msg("limits of plugin process trees fall back to cgroup v1 groups or rlimits: " + p.leafWhy)
	}
	// Orphans of a tree come to the daemon, not init: a process that left
	// its cgroup all the same is still known as a tool's (Owns).
	if err := setSubreaper(); err != nil {
		log.Warn().Err(err).Msg("cannot become a child subreaper: orphans of plugin process trees go to init")
	}
	p.removeStale()
	return p, nil
}

// probes numbers the probe cgroups of this process.
var probes atomic.Uint64

// removeStale kills and removes the cgroups of daemons that are gone (a
// crash leaves them; systemd cleans up only when the whole unit stops).
func (p *cgroupPlatform) removeStale() {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if tag, _, _ := strings.Cut(rest, "-"); !DaemonGone(tag) {
			continue // ours, or its daemon runs (or may: another PID namespace's)
		}
		g := &cgroupBackend{dir: filepath.Join(p.dir, e.Name()), fd: -1}
		if g.alive() {
			p.log.Warn().Str("cgroup", g.dir).Msg("killing processes left by a daemon that is gone")
			g.killAll()
			deadline := time.Now().Add(freezeWait)
			for g.alive() && time.Now().Before(deadline) {
				time.Sleep(pollEvery) // a one-off at start-up, not synchronisation
			}
		}
		_ = os.Remove(g.dir)
	}
}

// cgroupPoolSize is how many emptied cgroups are kept for reuse. Reuse
// saves a few hundred microseconds per run, but a Node.js host started into
// a recycled cgroup right after the previous host was killed died at once
// (toolhost/direct's restart tests, every run on a 6.18 kernel with a hybrid
// cgroup hierarchy); until that is understood every tree gets a new cgroup.
const cgroupPoolSize = 0

func (p *cgroupPlatform) newTree(id string) (backend, error) {
	name := cgroupPrefix + id
	p.mu.Lock()
	if n := len(p.pool); n > 0 {
		name = p.pool[n-1]
		p.pool = p.pool[:n-1]
	}
	p.mu.Unlock()
	dir := filepath.Join(p.dir, name)
	if name == cgroupPrefix+id {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &cgroupBackend{p: p, dir: dir, fd: fd, log: p.log, rel: path.Join(p.rel, name)}, nil
}

// recycle keeps an empty cgroup for the next tree; false when the pool is full.
func (p *cgroupPlatform) recycle(dir string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.pool) >= cgroupPoolSize {
		return false
	}
	p.pool = append(p.pool, filepath.Base(dir))
	return true
}

// close removes the pooled cgroups.
func (p *cgroupPlatform) close() {
	p.mu.Lock()
	pool := p.pool
	p.pool, p.closed = nil, true
	p.mu.Unlock()
	for _, name := range pool {
		_ = os.Remove(filepath.Join(p.dir, name))
	}
}

// cgroupBackend is one tree's cgroup.
type cgroupBackend struct {
	p    *cgroupPlatform // nil for a stale cgroup being cleaned up
	dir  string
	fd   int // the directory, for CLONE_INTO_CGROUP; -1 once started
	pgid int
	log  zerolog.Logger
	// noKill forces the freeze path (tests; kernels before 5.14 lack cgroup.kill).
	noKill bool
	// rel is the cgroup's path as /proc/<pid>/cgroup shows it.
	rel string
}

func (b *cgroupBackend) sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: b.fd}
	if b.p != nil && b.p.fence {
		// Unshared by the child once clone3 put it in its cgroup: the
		// namespace's root is the tree's cgroup.
		a.Unshareflags = syscall.CLONE_NEWCGROUP
	}
	return a
}

func (b *cgroupBackend) started(pid int) {
	b.pgid = pid
	b.closeFD()
}

func (b *cgroupBackend) closeFD() {
	if b.fd >= 0 {
		_ = syscall.Close(b.fd)
		b.fd = -1
	}
}

// pids lists the cgroup's processes.
func (b *cgroupBackend) pids() []int { return cgroupPids(b.dir) }

// reap collects members that became zombies of the daemon, which happens
// only when it is also a subreaper (it makes itself one, see
// newCgroupPlatform): exited processes leave cgroup.procs but
// /proc/<pid>/cgroup still names the cgroup. The leader is left to its
// os.Process. Most calls leave no zombie behind: a peek that reaps nothing
// says so, and only then are the daemon's own children read, not /proc.
func (b *cgroupBackend) reap() {
	if !isSubreaper() || !hasEndedChild() {
		return
	}
	self := os.Getpid()
	want := []byte("0::" + b.rel + "\n")
	buf := make([]byte, 0, 512)
	for _, pid := range ownChildren() {
		if pid == b.pgid {
			continue
		}
		if pi, ok := readStat(pid, buf); !ok || pi.ppid != self || !pi.ended() {
			continue
		}
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup"); err == nil && bytes.Contains(data, want) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// signal: the cgroup holds only this tree's processes (a pid read here and
// gone before the kill could in theory be reused within microseconds;
// pid_max makes that remote).
func (b *cgroupBackend) signal(sig syscall.Signal) {
	for _, pid := range b.pids() {
		_ = syscall.Kill(pid, sig)
	}
}

// alive reads cgroup.events: exited processes (zombies) leave the cgroup.
func (b *cgroupBackend) alive() bool {
	data, err := os.ReadFile(filepath.Join(b.dir, "cgroup.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	return false
}

func (b *cgroupBackend) killAll() {
	if !b.noKill {
		err := os.WriteFile(filepath.Join(b.dir, "cgroup.kill"), []byte("1"), 0)
		if err == nil && !b.anyMainThreadGone() {
			return
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			b.log.Warn().Err(err).Str("cgroup", b.dir).Msg("cgroup.kill failed; freezing and killing each process")
		}
	}
	// Frozen processes cannot fork, and a fatal signal still ends them.
	freeze := filepath.Join(b.dir, "cgroup.freeze")
	frozen := os.WriteFile(freeze, []byte("1"), 0) == nil
	if frozen {
		deadline := time.Now().Add(freezeWait)
		for !b.frozen() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // the kernel reports frozen within a scheduling round
		}
	}
	for _, pid := range b.pids() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if frozen {
		_ = os.WriteFile(freeze, []byte("0"), 0)
	}
}

// anyMainThreadGone reports whether a process of the cgroup has lost its
// main thread while others run (procInfo.mainThreadGone). cgroup.kill
// passes over such a process (seen on Linux 6.18); kill(2) on its pid still
// ends every thread.
func (b *cgroupBackend) anyMainThreadGone() bool {
	buf := make([]byte, 0, 512)
	for _, pid := range b.pids() {
		if pi, ok := readStat(pid, buf); ok && pi.mainThreadGone() {
			return true
		}
	}
	return false
}

func (b *cgroupBackend) frozen() bool {
	data, err := os.ReadFile(filepath.Join(b.dir, "cgroup.events"))
	return err == nil && bytes.Contains(data, []byte("frozen 1"))
}

// release removes the cgroup; it must be empty. A cgroup that cannot be
// removed yet is logged, and removed by the next daemon's start-up.
func (b *cgroupBackend) release() {
	b.closeFD()
	b.reap()
	if b.p != nil && !b.alive() && b.p.recycle(b.dir) {
		return
	}
	err := os.Remove(b.dir)
	for i := 0; err != nil && errors.Is(err, syscall.EBUSY) && i < 100; i++ {
		time.Sleep(pollEvery) // the last exit is being accounted
		err = os.Remove(b.dir)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b.log.Warn().Err(err).Str("cgroup", b.dir).Msg("cannot remove a plugin cgroup")
	}
}

func (b *cgroupBackend) cgroupDir() string { return b.dir }
