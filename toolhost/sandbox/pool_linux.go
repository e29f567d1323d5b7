package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// Starting the launcher is most of a confined call's cost: a Go binary's
// exec, runtime start and package initialisers come to a few milliseconds
// before its init runs. A few launchers are therefore started ahead of
// calls, each the leader of its own new process tree, blocked on a socket
// until a call hands it its launch: the command, policy, environment,
// working directory and fds (SCM_RIGHTS, the status pipe first). It then
// does what a freshly started launcher does and execs. What makes a
// waiting launcher safe to keep:
//   - it holds nothing of a call before its job: its environment is its
//     tree's marker alone, its fds the socket and /dev/null;
//   - it serves one launch: it reads one message, closes the socket and
//     execs or exits;
//   - its tree (cgroup, process group) is new and empty but for it, and
//     becomes the call's: nothing of the call runs outside it;
//   - it dies with the daemon: the daemon's end of the socket closes with
//     the daemon, and the launcher exits on end-of-file;
//   - the call's namespaces it made before it waits (ns_linux.go) are the
//     same for every call, and their init, in its tree, holds none of its
//     fds and leaves when the launcher ends, however it ends.
//
// A launcher counts as waiting once it says so on its socket, its
// namespaces made: a call that takes it waits for nothing of its start.
//
// The pool starts filling at the second confined call within poolIdle (a
// one-off start such as `sandbox run` starts nothing ahead) and empties
// after poolIdle without one, so an idle node keeps no launcher.

// poolArg is a waiting launcher's argv[1]; argv[2] is its socket's fd.
const poolArg = "wait"

const (
	// poolSize launchers wait at most.
	poolSize = 2
	// poolIdle without a confined call empties the pool.
	poolIdle = time.Minute
	// maxLaunchMsg bounds a launch handed over the socket (the launcher's
	// receive buffer); a larger one goes to a launcher started for it.
	maxLaunchMsg = 64 << 10
	// maxLaunchFds bounds the fds handed with it.
	maxLaunchFds = 64
)

// launcherPool keeps up to poolSize launchers waiting.
type launcherPool struct {
	mu       sync.Mutex
	trees    *proctree.Manager // the first call's; others start cold
	ready    []*waitingLauncher
	starting int
	// filled is signalled when a start ends, so that a call that found
	// none ready takes the one already under way.
	filled  *sync.Cond
	lastUse time.Time
	// active: calls come often enough to keep launchers waiting.
	active bool
	// kind: how launchers start (their namespaces), as the last call's needed.
	kind  launcherKind
	timer *time.Timer
	// callWait is readyWithin; a test makes it short to see slow starts.
	callWait time.Duration
}

// launcherKind is what differs between waiting launchers: whether they
// made the call's namespaces, in a user namespace of their own or not.
type launcherKind struct{ ns, userNS bool }

// waitingLauncher is a started launcher waiting for its launch.
type waitingLauncher struct {
	proc *os.Process
	tree *proctree.Tree
	conn *os.File // the daemon's end of the socket
}

// launch hands r's command to a waiting launcher; ok is false when none
// can take it (the caller starts one), and then nothing was started.
func (p *launcherPool) launch(trees *proctree.Manager, r *Run, a *os.ProcAttr) (proc *os.Process, tree *proctree.Tree, err error, ok bool) {
	if p == nil || len(a.Files) > maxLaunchFds {
		return nil, nil, nil, false
	}
	l := launch{Policy: r.pol, Path: r.Path, Args: r.Args, Dir: a.Dir}
	var fds []int
	for _, f := range a.Files {
		if f == nil {
			l.Fds = append(l.Fds, -1)
			continue
		}
		l.Fds = append(l.Fds, len(fds))
		fds = append(fds, int(f.Fd()))
	}
	for {
		w := p.take(trees, launcherKind{ns: r.pol.NS != nil, userNS: r.userNS})
		if w == nil {
			return nil, nil, nil, false
		}
		stepEnd("daemon: launcher taken")
		l.Env = w.tree.Environ(a.Env)
		data := encodeLaunch(nil, &l)
		if len(data) > maxLaunchMsg {
			p.putBack(w)
			return nil, nil, nil, false
		}
		lf, err := newStatusPipe(r.Path)
		if err != nil {
			p.discard(w)
			return nil, nil, err, true
		}
		if err := r.prepare(w.tree); err != nil { // the limits, before the launch reaches it
			lf.abandon()
			p.discard(w)
			return nil, nil, err, true
		}
		rights := unix.UnixRights(append([]int{int(lf.statw.Fd())}, fds...)...)
		err = unix.Sendmsg(int(w.conn.Fd()), data, rights, nil, unix.MSG_NOSIGNAL)
		w.conn.Close()
		stepEnd("daemon: launch sent")
		if err != nil {
			// It died waiting (killed, or its tree ended): the next one.
			lf.abandon()
			endFailed(w.proc, w.tree)
			continue
		}
		if err := lf.wait(); err != nil {
			endFailed(w.proc, w.tree)
			return nil, nil, err, true
		}
		stepEnd("daemon: command running")
		return w.proc, w.tree, nil, true
	}
}

// take returns a waiting launcher of trees, started as kind says, or nil.
func (p *launcherPool) take(trees *proctree.Manager, kind launcherKind) *waitingLauncher {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trees == nil {
		p.trees = trees
	}
	if p.trees != trees {
		return nil
	}
	if p.kind != kind {
		// Those waiting were started for other calls: start the next ones as this one's.
		p.kind = kind
		for _, w := range p.ready {
			go p.discard(w)
		}
		p.ready = nil
	}
	now := time.Now()
	// A one-off (`sandbox run`, a probe) starts nothing ahead.
	p.active = !p.lastUse.IsZero() && now.Sub(p.lastUse) < poolIdle
	p.lastUse = now
	if !p.active {
		return nil
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(poolIdle, p.drainIfIdle)
		p.filled = sync.NewCond(&p.mu)
	} else {
		p.timer.Reset(poolIdle)
	}
	// One under way is ready sooner than one started now.
	for len(p.ready) == 0 && p.starting > 0 {
		p.filled.Wait()
	}
	var w *waitingLauncher
	if n := len(p.ready); n > 0 {
		w = p.ready[0]
		p.ready = p.ready[1:]
	}
	return w
}

// refill starts what the pool lacks. A run calls it when it closes, its
// processes gone, so that a launcher's start — a few milliseconds of CPU —
// does not compete with the call it would serve.
func (p *launcherPool) refill() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active {
		return
	}
	for ; len(p.ready)+p.starting < poolSize; p.starting++ {
		go p.fill()
	}
}

// putBack returns an unused launcher to the pool.
func (p *launcherPool) putBack(w *waitingLauncher) {
	p.mu.Lock()
	p.ready = append(p.ready, w)
	p.mu.Unlock()
}

// waiting is how many launchers wait now.
func (p *launcherPool) waiting() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// fill starts one waiting launcher.
func (p *launcherPool) fill() {
	p.mu.Lock()
	kind := p.kind
	p.mu.Unlock()
	counted := true // in p.starting, which a call that finds none ready waits on
	w, err := startWaiting(p.trees, kind)
	if err == nil {
		err = w.ready(cmp.Or(p.callWait, readyWithin))
		if errors.Is(err, errNotWaitingYet) {
			// Slow, not broken (a loaded machine): no call waits for it
			// any more, but it still fills the pool when it is ready.
			p.mu.Lock()
			p.starting--
			p.filled.Broadcast()
			p.mu.Unlock()
			counted = false
			err = w.ready(poolIdle)
		}
		if err != nil {
			p.discard(w)
			w = nil
		}
	}
	p.mu.Lock()
	if counted {
		p.starting--
		p.filled.Broadcast()
	}
	if err != nil || !p.active || time.Since(p.lastUse) >= poolIdle || p.kind != kind || len(p.ready) >= poolSize {
		p.mu.Unlock()
		if w != nil {
			p.discard(w)
		}
		return
	}
	p.ready = append(p.ready, w)
	p.mu.Unlock()
}

// readyWithin bounds how long a call waits for a launcher under way
// instead of starting one of its own.
const readyWithin = 5 * time.Second

// errNotWaitingYet: a launcher did not say it waits within the time given.
var errNotWaitingYet = errors.New("sandbox launcher: not waiting yet")

// ready waits, at most within, until w waits for its launch, its
// namespaces made (it says so on its socket): a call that takes it then
// waits for none of its start.
func (w *waitingLauncher) ready(within time.Duration) error {
	fd := int(w.conn.Fd())
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(within)
	for {
		n, err := unix.Poll(pfd, int(max(time.Until(deadline), 0).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w after %s", errNotWaitingYet, within)
		}
		break
	}
	var b [1]byte
	if n, err := unix.Read(fd, b[:]); err != nil || n != 1 {
		return fmt.Errorf("sandbox launcher: ended before it waited (%v)", err)
	}
	return nil
}

// drainIfIdle ends the waiting launchers after poolIdle without a call.
func (p *launcherPool) drainIfIdle() {
	p.mu.Lock()
	if idle := time.Since(p.lastUse); idle < poolIdle {
		p.timer.Reset(poolIdle - idle)
		p.mu.Unlock()
		return
	}
	ready := p.ready
	p.ready, p.active = nil, false
	p.mu.Unlock()
	for _, w := range ready {
		p.discard(w)
	}
}

// discard ends a launcher that will get no launch.
func (p *launcherPool) discard(w *waitingLauncher) {
	w.conn.Close()
	endFailed(w.proc, w.tree)
}

// startWaiting starts a launcher, as the leader of a new tree, that waits
// on a socket for its launch, with the call's namespaces made as kind says
// (they are the same for every call).
func startWaiting(trees *proctree.Manager, kind launcherKind) (*waitingLauncher, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "launcher"), os.NewFile(uintptr(fds[1]), "launcher")
	defer theirs.Close()
	proc, tree, err := trees.StartProcess("/proc/self/exe", []string{launchArg0, poolArg, "3", launcherArg(kind.ns)},
		&os.ProcAttr{Files: []*os.File{nil, nil, nil, theirs}, Sys: launcherSys(kind.ns, kind.userNS)})
	if err != nil {
		ours.Close()
		return nil, err
	}
	return &waitingLauncher{proc: proc, tree: tree, conn: ours}, nil
}

// dropStrays closes what a waiting launcher got beyond its socket (fd
// sockArg) and 0 to 2: fds that another start of the daemon's had open
// without close-on-exec while this one was forked (Go's start of a process
// in a user namespace writes its id maps so). A launcher started for a
// call marks them close-on-exec instead (launcherMain); one that waits
// must hold nothing. It reads the machine's /proc, before the launcher
// mounts its own.
func dropStrays(sockArg string) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		os.Exit(126) // it cannot tell what it holds
	}
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil || fd <= 2 || ent.Name() == sockArg {
			continue
		}
		// The runtime's own (and the directory read) are close-on-exec.
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			_ = unix.Close(fd)
		}
	}
}

// waitForLaunch is a waiting launcher: it receives one launch on the
// socket at fd sockArg, puts the files it got where the command expects
// them and enters its directory, from then on as a launcher started for
// that launch. The daemon closing the socket (it stopped, or the pool
// shrank) ends it.
func waitForLaunch(sockArg string) *launchJob {
	sock, err := strconv.Atoi(sockArg)
	if err != nil {
		os.Exit(126)
	}
	unix.CloseOnExec(sock)
	warmDecoder()
	buf := make([]byte, maxLaunchMsg+1)
	oob := make([]byte, unix.CmsgSpace(4*(maxLaunchFds+1)))
	var n, oobn, flags int
	stepEnd("launcher: waiting")
	// Ready: the daemon counts it waiting from now on (launcherPool.fill).
	_, _ = unix.Write(sock, []byte{1})
	for {
		n, oobn, flags, _, err = unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	_ = unix.Close(sock)
	if err != nil || n == 0 && oobn == 0 {
		if theInit != nil {
			theInit.letGo() // it leaves with the launcher
		}
		os.Exit(0)
	}
	var got []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if fds, err := unix.ParseUnixRights(&m); err == nil {
				got = append(got, fds...)
			}
		}
	}
	if len(got) == 0 {
		os.Exit(126) // no status pipe to say why
	}
	// Above every fd the command gets, so that placing them keeps it.
	status, err := highFd(got[0], maxLaunchFds)
	if err != nil {
		os.Exit(126)
	}
	fail := statusReporter(status)
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		fail("read", errors.New("launch truncated"))
	}
	stepEnd("launcher: launch received")
	l, err := decodeLaunch(buf[:n])
	if err != nil {
		fail("read", err)
	}
	stepEnd("launcher: launch decoded")
	if l.Policy == nil || l.Path == "" || len(l.Args) == 0 || l.Env == nil || len(l.Fds) > maxLaunchFds {
		fail("read", errors.New("incomplete launch"))
	}
	if err := placeFds(l.Fds, got[1:]); err != nil {
		fail("read", err)
	}
	if l.Dir != "" {
		if err := unix.Chdir(l.Dir); err != nil {
			fail("exec", err) // as a start into a missing directory reports it
		}
	}
	stepEnd("launcher: fds placed, directory entered")
	return &launchJob{l: l, env: l.Env, nfds: len(l.Fds), statusFd: status, fail: fail}
}

// warmDecoder decodes a launch once while the launcher waits: the first
// run of the decoder's code and of the allocations it makes (page faults
// in a fresh process) are then off the call's path.
func warmDecoder() {
	_, _ = decodeLaunch(encodeLaunch(nil, &launch{
		Policy: &policy{Grants: []Grant{{Path: "/", Write: true}}, Ports: []uint16{1}, Tasks: []string{"t"},
			Rlimits: map[int]uint64{1: 1}, Filter: []byte{0}, Hide: []string{"/"}, NS: &nsPlan{}},
		Path: "/", Args: []string{"a"}, Env: []string{"A=1"}, Dir: "/", Fds: []int{0, -1},
	}))
}

// placeFds makes the command's fds: fd i is got[want[i]] (none where
// want[i] is -1; 0 to 2 then stay the /dev/null the runtime opened, as in
// a launcher started with them closed). Every other fd is closed on exec.
func placeFds(want, got []int) error {
	// First above every target, so that no dup3 overwrites a file still to place.
	high := make([]int, len(got))
	for i, fd := range got {
		h, err := highFd(fd, len(want))
		if err != nil {
			return err
		}
		high[i] = h
	}
	for i, k := range want {
		switch {
		case k >= 0 && k < len(high):
			if err := unix.Dup3(high[k], i, 0); err != nil {
				return err
			}
		case k >= 0:
			return errors.New("launch names a file it did not send")
		case i > 2:
			_ = unix.Close(i)
		}
	}
	for _, h := range high {
		_ = unix.Close(h)
	}
	return nil
}
