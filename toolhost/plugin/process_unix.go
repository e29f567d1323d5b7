//go:build unix

package plugin

import (
	"errors"
	"syscall"
)

// processGroups: each plugin runs as the leader of its own process group, so
// the whole tree it starts can be signalled at once.
const processGroups = true

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to every process of group pgid.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}

// groupAlive reports whether group pgid still has a member (a zombie counts
// until it is reaped).
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
