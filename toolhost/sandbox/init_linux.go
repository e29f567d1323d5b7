package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A confined command with a PID namespace (ns_linux.go) runs under two
// processes that stay: the launcher, which the daemon started and waits
// for, and the namespace's init, a fork of the launcher made after it
// unshared the PID namespace.
//
//   - The launcher starts the command as its own child (the second process
//     of the namespace), waits for it and ends as it ended: the daemon's
//     Wait reports the command's exit, at the moment it exits, as without
//     a namespace. It does not forward signals: the daemon signals a tree
//     by signalling each of its processes, and a second copy would make
//     programs that count their SIGINTs hurry.
//   - The init is PID 1: what the command leaves behind when it exits (an
//     async plugin's worker, a double fork, a setsid) is re-parented to it,
//     never to the daemon nor the machine's init. It mounts the namespace's
//     /proc, drops its capabilities, closes every file it inherited, reaps,
//     and once the launcher is gone waits for the last process and leaves.
//     Killing it (the tree's SIGKILL) ends every process of the namespace
//     at once, whatever they did to their session or environment.
//
// The init is not an exec of anything: it is the launcher's thread cloned
// without the runtime, running only raw system calls on what was prepared
// before the fork, so no second binary starts per call.

// initArgs is everything the init touches, made before the fork: the
// child allocates nothing and calls nothing of the runtime. Addresses are
// kept as numbers: the child's memory (a copy, or the launcher's own where
// it shares it) has them at the same place.
type initArgs struct {
	procSrc, procDst, procType uintptr // "proc", "/proc", "proc"
	root                       uintptr // "/"
	ready                      uintptr // write end: 4 bytes, 0 or the errno of the setup
	hold                       uintptr // read end (non-blocking): end of file once the launcher let go
	done                       uintptr // write end: a byte when the init stays after the launcher let go
	stayAt                     uintptr // &stay
	capHdr, capData            uintptr // capset arguments that clear every set
	chldAt, fdsAt, bufAt       uintptr // &chld, &fds, &buf
	errnoAt                    uintptr // &errno

	strs  [4][8]byte // NUL-terminated
	hdr   unix.CapUserHeader
	data  [2]unix.CapUserData
	chld  uint64 // a sigset of SIGCHLD
	fds   [2]unix.PollFd
	buf   [128]byte // a signalfd's siginfo
	errno uint32
	stay  byte
	stack initStack
}

// heldInitArgs makes startInit's arguments a heap object.
var heldInitArgs *initArgs

// nsInit is the launcher's side of the namespace's init.
type nsInit struct {
	pid        int
	hold, done *os.File
	// args stay the init's for its life where it shares the launcher's
	// memory (its stack among them).
	args *initArgs
}

// theInit is the init of the launcher's namespace, nil without one.
var theInit *nsInit

// letGo tells the init that the launcher is about to leave. An init with
// nothing left to wait for leaves first, and letGo reaps it: the tree is
// empty by the time the daemon sees the launcher's end, so a call that
// left nothing behind ends with nothing to kill.
func (in *nsInit) letGo() {
	in.hold.Close()
	var b [1]byte
	n, _ := readFull(int(in.done.Fd()), b[:])
	in.done.Close()
	if n == 0 {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(in.pid, &ws, 0, nil); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}
}

// startInit forks the namespace's init from the calling thread, which must
// have unshared the PID namespace (its next child is PID 1) and be locked
// to its OS thread. It returns once the init mounted /proc. Its pipes are
// at floor (above 2) or higher, out of the way of the fds a launch places
// later; the init moves its ends to 0 and 1.
func startInit(floor int) (*nsInit, error) {
	var ready, keep, done [2]int
	for _, p := range []*[2]int{&ready, &keep, &done} {
		flags := unix.O_CLOEXEC
		if p == &keep {
			flags |= unix.O_NONBLOCK
		}
		if err := unix.Pipe2(p[:], flags); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		for i := range p {
			var err error
			if p[i], err = highFd(p[i], floor); err != nil {
				return nil, fmt.Errorf("init: %w", err)
			}
		}
	}
	defer unix.Close(ready[0])
	// On the heap, where nothing moves (a goroutine's stack may), and
	// kept there until the fork is done; then, for an init that shares
	// the launcher's memory, for its life (nsInit.args).
	a := new(initArgs)
	heldInitArgs = a
	defer func() { heldInitArgs = nil }()
	for i, str := range []string{"proc", "/proc", "proc", "/"} {
		copy(a.strs[i][:], str)
	}
	a.hdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	a.chld = 1 << (unix.SIGCHLD - 1)
	a.fds[0] = unix.PollFd{Fd: 0, Events: unix.POLLIN}
	a.fds[1] = unix.PollFd{Fd: 2, Events: unix.POLLIN}
	a.done, a.stay = uintptr(done[1]), 1
	a.stayAt = uintptr(unsafe.Pointer(&a.stay))
	a.procSrc, a.procDst = uintptr(unsafe.Pointer(&a.strs[0][0])), uintptr(unsafe.Pointer(&a.strs[1][0]))
	a.procType, a.root = uintptr(unsafe.Pointer(&a.strs[2][0])), uintptr(unsafe.Pointer(&a.strs[3][0]))
	a.ready, a.hold = uintptr(ready[1]), uintptr(keep[0])
	a.capHdr, a.capData = uintptr(unsafe.Pointer(&a.hdr)), uintptr(unsafe.Pointer(&a.data[0]))
	a.chldAt, a.fdsAt, a.bufAt = uintptr(unsafe.Pointer(&a.chld)), uintptr(unsafe.Pointer(&a.fds[0])), uintptr(unsafe.Pointer(&a.buf[0]))
	a.errnoAt = uintptr(unsafe.Pointer(&a.errno))

	// No signal reaches the child before it could block them: it inherits
	// this thread's mask, all blocked around the fork as the runtime's own
	// fork does, and keeps it.
	blockAll, oldMask := ^uint64(0), uint64(0)
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&blockAll)), uintptr(unsafe.Pointer(&oldMask)), 8, 0, 0)
	child, errno := forkInit(a)
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&oldMask)), 0, 8, 0, 0)
	runtime.KeepAlive(a)
	unix.Close(ready[1])
	unix.Close(keep[0])
	unix.Close(done[1])
	in := &nsInit{pid: int(child), hold: os.NewFile(uintptr(keep[1]), "vcpnode-init-hold"), done: os.NewFile(uintptr(done[0]), "vcpnode-init-done"), args: a}
	if errno != 0 {
		in.hold.Close()
		in.done.Close()
		return nil, fmt.Errorf("init: fork: %w", errno)
	}
	var got [4]byte
	n, rerr := readFull(ready[0], got[:])
	if e := syscall.Errno(binary.NativeEndian.Uint32(got[:])); rerr != nil || n < 4 || e != 0 {
		in.letGo()
		if e != 0 {
			return nil, fmt.Errorf("init: mount /proc: %w", e)
		}
		return nil, fmt.Errorf("init: no answer from the namespace's init (%v)", rerr)
	}
	return in, nil
}

func readFull(fd int, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// initMain is the init: raw system calls only, on a stack that does not
// grow, with every signal blocked (the runtime's handlers must never run
// in this copy of the process).
//
//go:nosplit
//go:norace
func initMain(a *initArgs) {
	_, _, e := syscall.RawSyscall6(unix.SYS_MOUNT, a.procSrc, a.procDst, a.procType,
		unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, 0, 0)
	if e == 0 {
		// Nothing the tool runs may inspect or borrow from its init.
		_, _, e = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0, 0, 0, 0, 0)
	}
	if e == 0 {
		_, _, e = syscall.RawSyscall6(unix.SYS_CAPSET, a.capHdr, a.capData, 0, 0, 0, 0)
	}
	a.errno = uint32(e)
	_, _, _ = syscall.RawSyscall6(unix.SYS_WRITE, a.ready, a.errnoAt, 4, 0, 0, 0)
	if e != 0 {
		initExit(1)
	}
	// Keep the launcher's pipes as fds 0 and 1 and close everything else:
	// the tool's stdio among them, whose readers wait for every writer.
	_, _, _ = syscall.RawSyscall6(unix.SYS_DUP3, a.hold, 0, 0, 0, 0, 0)
	_, _, _ = syscall.RawSyscall6(unix.SYS_DUP3, a.done, 1, 0, 0, 0, 0)
	if _, _, e := syscall.RawSyscall6(unix.SYS_CLOSE_RANGE, 2, ^uintptr(0)>>32, 0, 0, 0, 0); e != 0 {
		for fd := uintptr(2); fd < 4096; fd++ {
			_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
		}
	}
	sfd, _, e := syscall.RawSyscall6(unix.SYS_SIGNALFD4, ^uintptr(0), a.chldAt, 8, unix.SFD_NONBLOCK|unix.SFD_CLOEXEC, 0, 0)
	if e != 0 || sfd != 2 {
		initExit(1) // the namespace ends: better than a zombie farm
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_CHDIR, a.root, 0, 0, 0, 0, 0)
	// While the launcher waits for the command: reap orphans as they end.
	for {
		_, _, _ = syscall.RawSyscall6(unix.SYS_PPOLL, a.fdsAt, 2, 0, 0, 0, 0)
		for {
			if _, _, e := syscall.RawSyscall6(unix.SYS_READ, 2, a.bufAt, 128, 0, 0, 0); e != 0 {
				break
			}
		}
		initReap(unix.WNOHANG)
		n, _, e := syscall.RawSyscall6(unix.SYS_READ, 0, a.bufAt, 1, 0, 0, 0)
		if e == 0 && n == 0 || e != 0 && e != syscall.EINTR && e != syscall.EAGAIN {
			break // the launcher let go
		}
	}
	// Every process left is now this one's child or below one. None: leave
	// at once (the launcher waits for it). Else say so and wait for the last.
	if _, _, e := syscall.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), 0, unix.WNOHANG|unix.WALL, 0, 0, 0); e == syscall.ECHILD {
		initExit(0)
	}
	_, _, _ = syscall.RawSyscall6(unix.SYS_WRITE, 1, a.stayAt, 1, 0, 0, 0)
	_, _, _ = syscall.RawSyscall6(unix.SYS_CLOSE, 1, 0, 0, 0, 0, 0)
	initReap(0)
	initExit(0)
}

// initReap reaps children until none is left (or, with WNOHANG, none has ended).
//
//go:nosplit
//go:norace
func initReap(flags uintptr) {
	for {
		pid, _, e := syscall.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), 0, flags|unix.WALL, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 || pid == 0 {
			return
		}
	}
}

//go:nosplit
//go:norace
func initExit(code uintptr) {
	for {
		_, _, _ = syscall.RawSyscall6(unix.SYS_EXIT_GROUP, code, 0, 0, 0, 0, 0)
	}
}

// ignoreTreeSignals makes the launcher outlive the signals the daemon stops
// a tree with, once its command runs: the daemon signals each process of
// the tree, and this one must end as the command did, after it.
func ignoreTreeSignals() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
}

// superviseCommand is the launcher once it started the command (pid) in
// the namespace, its tree's signals ignored (ignoreTreeSignals): it lets
// go of the files it shares with the command, waits for it and ends the
// same way. It never returns.
func superviseCommand(pid int, inherited []int) {
	if devnull, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		for _, fd := range inherited {
			_ = unix.Dup3(devnull, fd, unix.O_CLOEXEC)
		}
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			if err != nil {
				os.Exit(127)
			}
			break
		}
	}
	stepEnd("launcher: command exited")
	if theInit != nil {
		theInit.letGo()
		stepEnd("launcher: init gone")
	}
	if !ws.Signaled() {
		os.Exit(ws.ExitStatus())
	}
	dieOf(ws.Signal())
}

// dieOf ends the process by sig, as the command ended: default action,
// unblocked, sent to this thread. No core file: the command's fault is not
// the launcher's.
func dieOf(sig syscall.Signal) {
	runtime.LockOSThread()
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	var act [4]uint64 // SIG_DFL, no flags, whatever the architecture's layout
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0)
	mask := uint64(1) << (uint(sig) - 1)
	_, _, _ = syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	os.Exit(128 + int(sig))
}

// inheritedFds are the files the daemon handed the launcher for the
// command, fds 0 to n-1: as ForkExec's Files, each open one in its place,
// a closed one closed (-1).
func inheritedFds(n int) []uintptr {
	n = max(n, 3)
	fds := make([]uintptr, n)
	for i := range fds {
		fds[i] = uintptr(i)
		if _, err := unix.FcntlInt(uintptr(i), unix.F_GETFD, 0); err != nil {
			fds[i] = ^uintptr(0)
		}
	}
	return fds
}

// inheritedOpen are the open ones of fds.
func inheritedOpen(fds []uintptr) []int {
	var out []int
	for _, fd := range fds {
		if fd != ^uintptr(0) {
			out = append(out, int(fd))
		}
	}
	return out
}
