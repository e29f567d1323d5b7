//go:build unix

package direct

import (
	"fmt"
	"os"
	"syscall"
)

// tcpChannelForTests makes hosts here use the loopback channel Windows
// uses, so that path runs against real Node.js in the tests.
var tcpChannelForTests bool

// newChannel is a socket pair for the host's fd 3.
func newChannel() (channel, error) {
	if tcpChannelForTests {
		c, err := newTCPChannel()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("socket pair: %w", err)
	}
	return &pairChannel{ours: ours, theirs: theirs}, nil
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
