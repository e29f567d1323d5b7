//go:build !windows

package outpipe

import (
	"os"

	"golang.org/x/sys/unix"
)

// New is a pipe for a child's stdout or stderr: ours reads, theirs is the
// child's. Read deadlines work on ours.
func New() (ours, theirs *os.File, err error) { return os.Pipe() }

// Pending is how many bytes wait unread in the pipe (or socket) f.
func Pending(f Conn) (int, error) {
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
