//go:build unix

package placeholders

import (
	"os"
	"syscall"
)

// groupAttr puts the shell in a new process group, so killing that group
// reaches what the shell started (unless it left the group).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killProcessGroup kills what is left of the group p leads. The kernel
// does not reuse a pid while a group of that id has members, so this cannot
// hit a stranger; an empty group gives ESRCH, which is fine.
func killProcessGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
