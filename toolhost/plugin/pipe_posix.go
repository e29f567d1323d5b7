//go:build !windows

package plugin

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// outputPipe is a pipe for a child's stdout or stderr: ours reads, theirs
// is the child's. Read deadlines work on ours.
func outputPipe() (ours, theirs *os.File, err error) { return os.Pipe() }

// sysAttr carries what the launch needs beyond argv (nothing on Unix).
func (l launch) sysAttr() *syscall.SysProcAttr { return nil }

// pendingBytes is how many bytes wait unread in the pipe f.
func pendingBytes(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ioErr error
	if err := rc.Control(func(fd uintptr) { n, ioErr = unix.IoctlGetInt(int(fd), fionread) }); err != nil {
		return 0, err
	}
	return n, ioErr
}
