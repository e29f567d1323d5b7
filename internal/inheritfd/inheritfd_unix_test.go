//go:build unix

package inheritfd

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// inheritedFD is a descriptor without close-on-exec, as one inherited
// from a parent is: a duplicate of stdin.
func inheritedFD(t *testing.T) int {
	t.Helper()
	syscall.ForkLock.RLock() // no child started meanwhile may inherit it
	fd, err := syscall.Dup(0)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if closeOnExec(t, fd) {
		t.Fatal("a duplicate has close-on-exec already: the test proves nothing")
	}
	return fd
}

func closeOnExec(t *testing.T, fd int) bool {
	t.Helper()
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.FD_CLOEXEC != 0
}

func TestKeepFromChildren(t *testing.T) {
	fd := inheritedFD(t)
	if err := KeepFromChildren(); err != nil {
		t.Fatal(err)
	}
	if !closeOnExec(t, fd) {
		t.Errorf("fd %d still has no close-on-exec", fd)
	}
	if closeOnExec(t, int(os.Stderr.Fd())) {
		t.Error("stderr was marked close-on-exec too")
	}
}

// TestCloseOnExecListed is the way without close_range (Linux before 5.11,
// macOS).
func TestCloseOnExecListed(t *testing.T) {
	fd := inheritedFD(t)
	if err := closeOnExecListed("/dev/fd", 3); err != nil {
		t.Fatal(err)
	}
	if !closeOnExec(t, fd) {
		t.Errorf("fd %d still has no close-on-exec", fd)
	}
	if err := closeOnExecListed(t.TempDir()+"/missing", 3); err == nil {
		t.Error("no error for a directory that does not exist")
	}
}
