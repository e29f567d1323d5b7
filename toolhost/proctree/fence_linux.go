package proctree

import (
	"runtime"
	"syscall"
)

// A tree's cgroup is also the root of its own cgroup namespace where the
// daemon may make one (CAP_SYS_ADMIN, in practice root) and the cgroup2
// hierarchy is mounted with nsdelegate (systemd does so): the kernel then
// refuses every move of a tree's process to a cgroup outside its own,
// whether by writing a cgroup.procs file or by clone3's CLONE_INTO_CGROUP
// (both answer ENOENT), whatever the process's uid and rights on the
// cgroup files. Leaving the namespace takes CAP_SYS_ADMIN, which a
// confined process does not have. Without nsdelegate a namespace is no
// boundary, and the daemon relies on the launcher's syscall filter (no
// clone3) and Landlock (no cgroup file writable) to keep its trees in
// their cgroups.

// canFence reports whether this process may give a child a cgroup
// namespace of its own: it tries, on a thread of its own that is then
// discarded (a locked thread that ends without unlocking dies with its
// goroutine, namespace and all).
func canFence() bool {
	ok := make(chan bool, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread is thrown away
		_, _, errno := syscall.RawSyscall(syscall.SYS_UNSHARE, syscall.CLONE_NEWCGROUP, 0, 0)
		ok <- errno == 0
	}()
	return <-ok
}
