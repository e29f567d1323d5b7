package proctree

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/rs/zerolog"
)

// ModeSubreaper: the daemon is a child subreaper and walks /proc.

// walkEvery is how often the walker looks for new members while trees
// exist, so an orphan is seen (and claimed) before it can exit unseen;
// every SIGCHLD also triggers a walk.
const walkEvery = 200 * time.Millisecond

// procInfo is one line of /proc/<pid>/stat.
type procInfo struct {
	pid, ppid, pgid, sid int
	state                byte
	threads              int
	start                uint64 // clock ticks after boot: tells a reused pid apart
}

// mainThreadGone reports a process whose main thread exited (pthread_exit
// in C) while other threads run: the state is the main thread's, so it
// shows Z, yet it can still fork and cannot be reaped until they end.
func (pi procInfo) mainThreadGone() bool { return pi.state == 'Z' && pi.threads > 1 }

// ended reports whether the process has exited as a whole.
func (pi procInfo) ended() bool {
	return pi.state == 'X' || (pi.state == 'Z' && !pi.mainThreadGone())
}

// Ended reads /proc/<pid>/stat: whether the process has exited as a whole
// (a zombie not yet reaped has; one whose main thread alone exited has
// not) and its parent; found is false when there is no such process. For
// checks of what a tree left behind (proctreetest).
func Ended(pid int) (ended bool, ppid int, found bool) {
	pi, ok := readStat(pid, make([]byte, 0, 512))
	return ok && pi.ended(), pi.ppid, ok
}

// readProcs snapshots every process.
func readProcs() map[int]procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make(map[int]procInfo, len(names))
	buf := make([]byte, 0, 512)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if pi, ok := readStat(pid, buf); ok {
			out[pid] = pi
		}
	}
	return out
}

// readStat parses /proc/<pid>/stat (the command name may hold spaces and
// parentheses, so fields are counted from the last ')').
//
// It reads with plain system calls: an os.File would try to register each
// file with the network poller and set it non-blocking, which made up most
// of a walk's cost (BenchmarkReadProcs).
func readStat(pid int, buf []byte) (procInfo, bool) {
	fd, err := openNoIntr("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	n, err := readNoIntr(fd, buf[:cap(buf)])
	syscall.Close(fd)
	if err != nil {
		return procInfo{}, false
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads itrealvalue starttime
	var fields [20][]byte
	if firstFields(b[i+1:], fields[:]) < len(fields) || len(fields[0]) != 1 {
		return procInfo{}, false
	}
	atoi := func(b []byte) int { v, _ := strconv.Atoi(string(b)); return v }
	start, _ := strconv.ParseUint(string(fields[19]), 10, 64)
	return procInfo{pid: pid, state: fields[0][0], ppid: atoi(fields[1]), pgid: atoi(fields[2]),
		sid: atoi(fields[3]), threads: atoi(fields[17]), start: start}, true
}

// markerOf returns the value of pid's EnvMarker variable, "" when none.
// A process whose main thread exited has no environment under its own pid
// (that thread's memory is gone); its other threads share theirs.
func markerOf(pid int) string {
	dir := "/proc/" + strconv.Itoa(pid)
	data, _ := os.ReadFile(dir + "/environ")
	if len(data) == 0 {
		tids, _ := os.ReadDir(dir + "/task")
		for _, tid := range tids {
			if data, _ = os.ReadFile(dir + "/task/" + tid.Name() + "/environ"); len(data) > 0 {
				break
			}
		}
	}
	prefix := []byte(EnvMarker + "=")
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v)
		}
	}
	return ""
}

// setSubreaper makes the daemon adopt its descendants' orphans.
func setSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// isSubreaper reports whether this process adopts its descendants' orphans.
func isSubreaper() bool {
	const prGetChildSubreaper = 37
	var v int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetChildSubreaper, uintptr(unsafe.Pointer(&v)), 0)
	return errno == 0 && v != 0
}

// walker is the ModeSubreaper platform: it knows every tree and reaps the
// orphans it identified as their members.
type walker struct {
	log  zerolog.Logger
	self int

	mu    sync.Mutex
	trees map[*walkBackend]struct{}
	// foreign are adopted children that are no tree's (negative marker
	// checks), by pid and start time, so their environment is read once.
	foreign map[int]uint64
	// leftover are members of released trees not yet seen gone (pid →
	// start time): reaped when they turn into zombies of ours.
	leftover map[int]uint64

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func newWalker(log zerolog.Logger) (*walker, error) {
	if err := setSubreaper(); err != nil {
		return nil, err
	}
	w := &walker{
		log:      log,
		self:     os.Getpid(),
		trees:    make(map[*walkBackend]struct{}),
		foreign:  make(map[int]uint64),
		leftover: make(map[int]uint64),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go w.loop()
	return w, nil
}

func (w *walker) loop() {
	defer close(w.done)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	tick := time.NewTicker(walkEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-chld:
		case <-w.kick:
		case <-tick.C:
		}
		w.mu.Lock()
		busy := len(w.trees) > 0 || len(w.leftover) > 0
		w.mu.Unlock()
		if busy {
			w.walk()
		}
	}
}

// walk updates every tree from a fresh snapshot and reaps members that
// became zombies of the daemon. It returns the snapshot.
func (w *walker) walk() map[int]procInfo {
	snap := readProcs()
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid, start := range w.foreign {
		if pi, ok := snap[pid]; !ok || pi.start != start {
			delete(w.foreign, pid)
		}
	}
	// Adopted orphans name their tree in their environment (read once).
	adopted := make(map[int]string)
	for pid, pi := range snap {
		if pi.ppid != w.self || pi.ended() || w.isLeader(pid) {
			continue
		}
		if start, ok := w.foreign[pid]; ok && start == pi.start {
			continue
		}
		if m := markerOf(pid); m != "" {
			adopted[pid] = m
		} else {
			w.foreign[pid] = pi.start
		}
	}
	claimed := make(map[int]uint64, len(w.leftover))
	for pid, start := range w.leftover {
		if pi, ok := snap[pid]; !ok || (start != 0 && pi.start != start) {
			delete(w.leftover, pid)
		} else {
			claimed[pid] = start
		}
	}
	for t := range w.trees {
		t.update(snap, w.self, adopted)
		for pid, start := range t.members {
			claimed[pid] = start
		}
	}
	for pid, pi := range snap {
		start, ok := claimed[pid]
		if !ok || pi.ppid != w.self || !pi.ended() || (start != 0 && start != pi.start) || w.isLeader(pid) {
			continue
		}
		// Ours to reap: a member of one of our trees, adopted as an orphan.
		// The leaders are left to the os.Process that started them. A
		// leftover stays listed until it is really collected: a walk that
		// dropped it on a failed attempt left a zombie for good.
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid || err == syscall.ECHILD {
			delete(w.leftover, pid)
		}
	}
	return snap
}

func (w *walker) isLeader(pid int) bool {
	for t := range w.trees {
		if t.leader == pid {
			return true
		}
	}
	return false
}

func (w *walker) newTree(id string) (backend, error) {
	b := &walkBackend{w: w, id: id, members: make(map[int]uint64)}
	return b, nil
}

func (w *walker) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// walkBackend is one tree in ModeSubreaper.
type walkBackend struct {
	w      *walker
	id     string // the marker's value
	leader int    // guarded by w.mu
	// members: pid → start time of every process seen in the tree, alive or
	// not; a pid whose start time changed was reused and is no member.
	members map[int]uint64
}

func (b *walkBackend) sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func (b *walkBackend) started(pid int) {
	w := b.w
	w.mu.Lock()
	b.leader = pid
	b.members[pid] = 0 // start time filled in by the first walk
	w.trees[b] = struct{}{}
	w.mu.Unlock()
	select { // look at once, before the leader's children can orphan
	case w.kick <- struct{}{}:
	default:
	}
}

// update adds to the tree every process related to a member: a child, a
// process of the leader's group or of a member's session, or an adopted
// orphan carrying the tree's marker. Called with w.mu held.
func (b *walkBackend) update(snap map[int]procInfo, self int, adopted map[int]string) {
	if b.leader == 0 {
		return
	}
	if b.members[b.leader] == 0 {
		if pi, ok := snap[b.leader]; ok {
			b.members[b.leader] = pi.start
		}
	}
	// is reports whether pid is a member and, if it still exists, the same
	// process as recorded (not a reused pid).
	is := func(pid int) bool {
		start, ok := b.members[pid]
		if !ok {
			return false
		}
		pi, live := snap[pid]
		return !live || start == 0 || pi.start == start
	}
	for changed := true; changed; {
		changed = false
		for pid, pi := range snap {
			if is(pid) {
				continue
			}
			related := (pi.ppid != self && pi.ppid != 0 && is(pi.ppid)) ||
				pi.pgid == b.leader ||
				(pi.sid != pid && is(pi.sid)) ||
				adopted[pid] == b.id
			if related {
				b.members[pid] = pi.start
				changed = true
			}
		}
	}
}

// live returns the members still running, from snap.
func (b *walkBackend) live(snap map[int]procInfo) []int {
	var out []int
	for pid, start := range b.members {
		if pi, ok := snap[pid]; ok && (start == 0 || pi.start == start) && !pi.ended() {
			out = append(out, pid)
		}
	}
	return out
}

// snapshot walks (reaping what it can) and returns this tree's live
// members, and whether one of them is still in the leader's process group.
func (b *walkBackend) snapshot() (live []int, groupInUse bool) {
	snap := b.w.walk()
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	live = b.live(snap)
	for _, pid := range live {
		if snap[pid].pgid == b.leader {
			groupInUse = true
		}
	}
	return live, groupInUse
}

func (b *walkBackend) signal(sig syscall.Signal) {
	live, groupInUse := b.snapshot()
	for _, pid := range live {
		_ = syscall.Kill(pid, sig)
	}
	// The group too, in case a member was forked since the walk. Only while
	// a member is in it: a group id is free for reuse once the group is empty.
	if groupInUse {
		b.w.mu.Lock()
		leader := b.leader
		b.w.mu.Unlock()
		_ = syscall.Kill(-leader, sig)
	}
}

func (b *walkBackend) alive() bool {
	live, _ := b.snapshot()
	return len(live) > 0
}

func (b *walkBackend) reap() { b.w.walk() }

// killAll stops every member with SIGSTOP and walks again until no new
// member appears (a stopped process cannot fork), then kills them all.
func (b *walkBackend) killAll() {
	stopped := make(map[int]bool)
	for round := 0; round < 1000; round++ {
		fresh := false
		live, _ := b.snapshot()
		for _, pid := range live {
			if !stopped[pid] {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				stopped[pid] = true
				fresh = true
			}
		}
		if !fresh {
			break
		}
	}
	for pid := range stopped {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	b.signal(syscall.SIGKILL)
}

// release forgets the tree; members that still exist (zombies of ours
// not reaped yet, or a process that outlived a failed kill) stay on the
// walker's list until they are gone.
func (b *walkBackend) release() {
	snap := b.w.walk()
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	delete(b.w.trees, b)
	for pid, start := range b.members {
		if pi, ok := snap[pid]; ok && pid != b.leader && (start == 0 || pi.start == start) {
			b.w.leftover[pid] = pi.start
		}
	}
}

// firstFields fills out with the first space-separated fields of b and
// returns how many it found (bytes.Fields without allocating them all).
func firstFields(b []byte, out [][]byte) int {
	n := 0
	for n < len(out) {
		b = bytes.TrimLeft(b, " \n")
		if len(b) == 0 {
			break
		}
		end := bytes.IndexAny(b, " \n")
		if end < 0 {
			end = len(b)
		}
		out[n], b = b[:end], b[end:]
		n++
	}
	return n
}

// openNoIntr opens path read-only, retrying on EINTR.
func openNoIntr(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// readNoIntr reads once into b, retrying on EINTR.
func readNoIntr(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, b)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}
