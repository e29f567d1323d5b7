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
// with a fresh tmpfs on /dev/shm, gone with the call. /tmp stays the
// machine's: Landlock keeps it from being written but for the call's own
// TMPDIR (removed after the call) and what a profile grants there, and a
// tmpfs over it would hide the machine's files a profile grants under it. A root
// daemon's launcher makes them itself; an ordinary user's launcher is
// started in a user namespace of its own (launchSys), where it holds the
// two capabilities it needs until it drops every capability before the
// exec. The user namespace maps the daemon's uid and gid to themselves:
// what a tool writes belongs to the user, as without a sandbox.

// nsPlan is what the launcher sets up before it confines (policy.NS):
// for now the same namespaces for every call.
type nsPlan struct{}

// launchSys is how the daemon starts a launcher that makes namespaces: an
// ordinary user's in a user namespace of its own, with CAP_SYS_ADMIN (the
// namespaces and mounts) and CAP_SETPCAP (to empty the bounding set) as
// ambient capabilities, since exec under a uid other than 0 clears the
// rest; nil for a root daemon or a call without namespaces.
func (r *Run) launchSys() *syscall.SysProcAttr {
	if r.pol == nil || r.pol.NS == nil || !r.userNS {
		return nil
	}
	return userNSAttr()
}

// userNSAttrIf is userNSAttr when userNS, else nil.
func userNSAttrIf(userNS bool) *syscall.SysProcAttr {
	if !userNS {
		return nil
	}
	return userNSAttr()
}

func userNSAttr() *syscall.SysProcAttr {
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// enterNamespaces makes the call's namespaces from the calling thread,
// which must be locked to its OS thread (the launcher's): a mount
// namespace with private mounts and a tmpfs on /dev/shm, and a PID namespace whose init (init_linux.go) mounted
// its /proc. The commands this thread starts afterwards are in them.
func (n *nsPlan) enter() (*nsInit, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWPID); err != nil {
		return nil, fmt.Errorf("namespaces: %w", err)
	}
	// Nothing mounted here may reach the daemon's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("mount namespace: make mounts private: %w", err)
	}
	if err := tmpfsOn("/dev/shm"); err != nil {
		return nil, err
	}
	return startInit()
}

// tmpfsOn mounts a fresh tmpfs, everyone's like /tmp, on dir if it exists.
func tmpfsOn(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount namespace: tmpfs on %s: %w", dir, err)
	}
	return nil
}

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
	in, err := (&nsPlan{}).enter()
	if err != nil {
		fmt.Print(err)
		os.Exit(1)
	}
	in.letGo()
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
	if os.Geteuid() != 0 {
		cmd.SysProcAttr = userNSAttr()
	}
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
