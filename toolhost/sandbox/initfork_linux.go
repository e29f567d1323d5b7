//go:build linux && !amd64

package sandbox

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// initStack is the init's own stack where it shares the launcher's memory
// (initclone_linux_amd64.go); a forked init runs on its copy of the
// launcher's.
type initStack struct{}

// forkInit clones the calling thread into a new process (not a thread:
// memory is copied) that runs initMain and never returns.
//
//go:nosplit
//go:norace
func forkInit(a *initArgs) (uintptr, syscall.Errno) {
	pid, _, errno := syscall.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || pid != 0 {
		return pid, errno
	}
	initMain(a)
	return 0, 0
}
