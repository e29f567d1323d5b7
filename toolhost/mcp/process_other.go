//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

// groupAttr: without process groups (and without process trees) only the
// server itself can be stopped.
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup: without process groups only the server itself is stopped.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = p.Kill()
		return
	}
	_ = p.Signal(sig)
}
