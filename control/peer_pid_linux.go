package control

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// soPeerPIDFD is SO_PEERPIDFD (Linux 6.5): a pidfd of the peer as it
// connected.
const soPeerPIDFD = 77

// sysPidfdSendSignal is pidfd_send_signal(2)'s number on every Linux
// architecture (the syscall table was unified from 424 on).
const sysPidfdSendSignal = 424

// peerPID is the pid of the process on the other end of a control
// connection (SO_PEERCRED), 0 when it cannot be told.
func peerPID(c net.Conn) int {
	cred, err := peerCred(c)
	if err != nil {
		return 0
	}
	return int(cred.Pid)
}

// peerIsTool asks tool about the process that connected (pid) and makes
// sure the answer is about that process and not one that took its pid:
// a pidfd of the peer (SO_PEERPIDFD) must still reach it after the
// question, else the peer is refused. Kernels before 6.5 have no such
// pidfd: the pid must then still be in use after the question.
func peerIsTool(c net.Conn, pid int, tool func(pid int) bool) (bool, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false, fmt.Errorf("not a Unix socket connection (%T)", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false, err
	}
	pidfd, fdErr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		pidfd, fdErr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, soPeerPIDFD)
	}); err != nil {
		return false, err
	}
	switch {
	case errors.Is(fdErr, syscall.ENOPROTOOPT):
		isTool := tool(pid)
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return false, errors.New("the process that connected has ended")
		}
		return isTool, nil
	case fdErr != nil:
		return false, fmt.Errorf("SO_PEERPIDFD: %w", fdErr)
	}
	defer syscall.Close(pidfd)
	isTool := tool(pid)
	// A zombie still holds its pid: only a reaped peer answers ESRCH.
	_, _, errno := syscall.Syscall6(sysPidfdSendSignal, uintptr(pidfd), 0, 0, 0, 0, 0)
	if errno == syscall.ESRCH {
		return false, errors.New("the process that connected has ended")
	}
	return isTool, nil
}
