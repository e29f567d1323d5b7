//go:build unix

package placeholders

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the shell in a new process group and makes
// cancellation kill that whole group, not just the shell.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killProcessGroup kills what is left of the group led by pid. The kernel
// does not reuse a pid while a group of that id has members, so this cannot
// hit a stranger; an empty group gives ESRCH, which is fine.
func killProcessGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
