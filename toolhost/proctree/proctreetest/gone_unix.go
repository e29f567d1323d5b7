//go:build unix

package proctreetest

import (
	"errors"
	"os"
	"syscall"
)

// Gone reports whether pid no longer runs: no such process, or (where
// /proc tells) one that has wholly exited and waits for its parent,
// whichever that is, to reap it.
func Gone(pid int) bool {
	gone, _ := ended(pid)
	return gone
}

// Collected is Gone, except that a process left as a zombie of this test
// binary is not: the binary is a subreaper once a Manager in
// ModeSubreaper ran in it, orphans come to it, and collecting them is the
// job of the code under test. Use it where that code owns the processes.
func Collected(pid int) bool {
	gone, zombieOf := ended(pid)
	return gone && zombieOf != os.Getpid()
}

// ended reports whether pid no longer runs and, if it is a zombie, whose.
func ended(pid int) (gone bool, zombieOf int) {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true, 0
	}
	exited, ppid, found := procEnded(pid)
	switch {
	case !found:
		return procfs, 0 // it went between the two reads; without /proc, it is there
	case exited:
		return true, ppid
	}
	return false, 0
}
