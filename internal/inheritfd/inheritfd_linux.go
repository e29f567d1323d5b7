package inheritfd

import (
	"errors"
	"math"

	"golang.org/x/sys/unix"
)

// KeepFromChildren marks every file descriptor above stderr
// close-on-exec, so that a descriptor vcpnode inherited without the flag
// (a harness's, a shell's "3>file") never reaches a plugin, an interpreter,
// an MCP server or a command it starts: those get stdin, stdout, stderr and
// only what the daemon hands them on purpose (os/exec clears the flag on
// the descriptors it places). vcpnode itself needs none of them: systemd's
// notify socket is a path in $NOTIFY_SOCKET, and the control socket is
// one vcpnode opens. Call it before the first child starts.
func KeepFromChildren() error { return CloseOnExecFrom(3) }

// CloseOnExecFrom marks every file descriptor from first up close-on-exec:
// the sandbox's launcher calls it with the number of descriptors its
// command is given, whatever the process that started it held.
func CloseOnExecFrom(first int) error {
	err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		// close_range before Linux 5.9, or without CLOSE_RANGE_CLOEXEC
		// before 5.11 (or a seccomp filter refusing it).
		return closeOnExecListed("/proc/self/fd", first)
	}
	return err
}
