//go:build !unix

package placeholders

import (
	"os"
	"syscall"
)

// groupAttr: without process groups only the shell itself is killed.
func groupAttr() *syscall.SysProcAttr { return nil }

func killProcessGroup(p *os.Process) { _ = p.Kill() }
