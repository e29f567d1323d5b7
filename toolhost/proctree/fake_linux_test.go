package proctree

import (
	"os"
	"runtime"
	"syscall"
)

func init() {
	// Wired to the main thread from here on, so that exitMainThread ends
	// the thread the kernel reports the process by (its thread-group leader).
	if os.Getenv(fakeRoleEnv) != "" {
		runtime.LockOSThread()
	}
	exitMainThread = func() {
		// exit, not exit_group: only this thread ends. The Go runtime never
		// learns of it; the fake only sleeps until it is killed.
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
	}
}

// escapeAttr starts a process in the cgroup directory dir.
func escapeAttr(dir string) (*syscall.SysProcAttr, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}, nil
}
