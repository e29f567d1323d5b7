//go:build unix

package direct

import (
	"errors"
	"os"
	"syscall"
)

// processGroups: each host is the leader of its own process group, so what
// the plugin starts is signalled with it.
const processGroups = true

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// groupAlive reports whether group pgid still has a member.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// socketPair is the channel to a host: ours, and theirs for its fd 3.
func socketPair() (ours, theirs *os.File, err error) {
	// Under ForkLock, so no other child started meanwhile inherits them
	// (not every Unix has SOCK_CLOEXEC).
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "vcpnode-direct"), os.NewFile(uintptr(fds[1]), "vcpnode-direct-child"), nil
}
