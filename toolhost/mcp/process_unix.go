//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// Where process trees are unsupported, each stdio server leads its own
// process group, so whatever it starts (npx starts node, uvx starts python)
// and leaves in that group is stopped with it.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the server's whole group; the leader alone when the
// group is already gone.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		_ = p.Signal(sig)
	}
}
