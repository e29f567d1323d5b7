package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The namespaces of a confined call: a PID namespace with its own /proc,
// so the tool sees its own processes only (not other tools' command
// lines, environments or status, nor the daemon), and a mount namespace
// with a fresh tmpfs on /dev/shm, gone with the call, which holds the
// call's TMPDIR (privateTmp). /tmp stays the machine's: Landlock keeps it
// from being written but for what a profile grants there, and a tmpfs
// over it would hide the machine's files a profile grants under it.
// An ordinary user's launcher is started in a user namespace of its own,
// where it holds the two capabilities it needs until it drops every
// capability before the exec. The user namespace maps the daemon's uid
// and gid to themselves: what a tool writes belongs to the user, as
// without a sandbox.
//
// Every launcher that makes them, waiting in the pool or started for a
// call, makes them at its start, before it reads a launch: they hold
// nothing of any call, and a waiting launcher has them ready. They are
// made by the one thread that goes on to confine itself and start the
// command (launcherMain), by unshare: the mount, IPC and PID namespaces
// are then that thread's, its fork the init, its next fork the command.
// The daemon's start of a launcher makes none (a user namespace only, for
// an ordinary user): its clone copies no mount table.

// nsPlan is what the launcher sets up before it confines (policy.NS):
// for now the same namespaces for every call.
type nsPlan struct{}

// nsArg is a launcher's argv[3] when it makes the call's namespaces,
// noNSArg when not.
const nsArg, noNSArg = "ns", "-"

// launcherArg is the launcher's argv[3] for a call with namespaces or without.
func launcherArg(ns bool) string {
	if ns {
		return nsArg
	}
	return noNSArg
}

// launchSys is how the daemon starts r's launcher (launcherSys).
func (r *Run) launchSys() *syscall.SysProcAttr {
	return launcherSys(r.pol != nil && r.pol.NS != nil, r.userNS)
}

// launcherSys is how the daemon starts a launcher: with ns and userNS (an
// ordinary user's daemon), in a user namespace of its own, with
// CAP_SYS_ADMIN (the namespaces and mounts) and CAP_SETPCAP (to empty the
// bounding set) as ambient capabilities, since exec under a uid other
// than 0 clears the rest; nil otherwise (the launcher makes the call's
// namespaces itself, nsPlan.enter).
func launcherSys(ns, userNS bool) *syscall.SysProcAttr {
	if !ns || !userNS {
		return nil
	}
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// enter makes the call's namespaces on the calling thread, which must be
// locked to its OS thread and go on to start the command: a mount
// namespace with its mounts made slaves of the machine's and a tmpfs on
// /dev/shm, an IPC namespace (System V objects have no path Landlock
// could refuse, and would outlive the call for the next one), and a PID
// namespace whose init (init_linux.go), the thread's fork, mounted its
// /proc. Other threads of the launcher stay in the namespaces it was
// started in. The fds it keeps are at floor or above, out of the way of
// those a command gets.
func (n *nsPlan) enter(floor int) (*nsInit, error) {
	// CLONE_NEWNS gives the thread its own root and working directory too.
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWIPC); err != nil {
		return nil, fmt.Errorf("mount namespace: %w", err)
	}
	// Nothing mounted here may reach the daemon's namespace; what the
	// machine mounts later still shows, as to a launcher started later.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return nil, fmt.Errorf("mount namespace: make mounts slaves: %w", err)
	}
	stepEnd("ns: mount and IPC namespaces, mounts made slaves")
	shm, err := tmpfsOn("/dev/shm")
	if err != nil {
		return nil, err
	}
	if shm {
		if err := unix.Mkdir(privateTmp, 0o700); err != nil {
			return nil, fmt.Errorf("mount namespace: %s: %w", privateTmp, err)
		}
	}
	stepEnd("ns: tmpfs on /dev/shm")
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return nil, fmt.Errorf("namespaces: %w", err)
	}
	stepEnd("ns: PID namespace unshared")
	in, err := startInit(floor)
	if err != nil {
		return nil, err
	}
	stepEnd("ns: init forked, its /proc mounted")
	return in, nil
}

// highFd moves fd to floor or above (close-on-exec).
func highFd(fd, floor int) (int, error) {
	if fd >= floor {
		return fd, nil
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, floor)
	unix.Close(fd)
	return high, err
}

// tmpfsOn mounts a fresh tmpfs, everyone's like /tmp, on dir if it
// exists (shmOnMachine), and says whether it did.
func tmpfsOn(dir string) (bool, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false, nil
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return false, fmt.Errorf("mount namespace: tmpfs on %s: %w", dir, err)
	}
	return true, nil
}

// privateTmp is the TMPDIR of a call with its namespaces: a directory of
// its private /dev/shm, made with the namespaces (before the launch, for a
// launcher that waits) and gone with them. A call costs no directory made
// and removed on the machine's disk, and nothing it writes there can
// outlive it. Like /dev/shm, it is memory: counted in the call's memory
// limit.
const privateTmp = "/dev/shm/tmp"

// shmOnMachine: the machine has a /dev/shm, so the launcher makes
// privateTmp (enter).
var shmOnMachine = sync.OnceValue(func() bool {
	fi, err := os.Stat("/dev/shm")
	return err == nil && fi.IsDir()
})

// nsProbeArg0 starts the binary as a namespace probe: it makes the
// namespaces a call gets and says whether it could.
const nsProbeArg0 = "vcpnode-sandbox-nsprobe"

func init() {
	if len(os.Args) == 1 && os.Args[0] == nsProbeArg0 {
		nsProbeMain()
	}
}

// nsProbeMain makes the namespaces as a launcher would, lets the init go,
// and exits 0, or 1 with the reason on stdout.
func nsProbeMain() {
	runtime.LockOSThread()
	in, err := (&nsPlan{}).enter(3)
	if err == nil {
		in.letGo()
	}
	if err != nil {
		fmt.Print(err)
		os.Exit(1)
	}
	os.Exit(0)
}

// nsSupport is whether this machine gives confined calls their
// namespaces, found once per process by a real probe (the binary started
// as a launcher would be, in a user namespace for an ordinary user); why
// says what failed.
var nsSupport = sync.OnceValues(func() (bool, string) {
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{nsProbeArg0}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = launcherSys(true, os.Geteuid() != 0)
	out, err := cmd.Output()
	switch {
	case err == nil:
		return true, ""
	case len(out) > 0:
		return false, string(out)
	case os.Geteuid() != 0:
		return false, "no user namespace for an ordinary user (user.max_user_namespaces, or an LSM that refuses them): " + err.Error()
	}
	return false, err.Error()
})
