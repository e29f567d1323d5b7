//go:build unix

package proctree

import (
	"errors"
	"syscall"
)

// pgBackend tracks a tree as its leader's process group (ModeProcessGroup).
type pgBackend struct{ pgid int }

func (b *pgBackend) sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func (b *pgBackend) started(pid int) { b.pgid = pid }

func (b *pgBackend) signal(sig syscall.Signal) {
	if b.pgid > 0 {
		_ = syscall.Kill(-b.pgid, sig)
	}
}

// alive counts a zombie until it is reaped: a group id is not reused while
// the group has a member, so signalling it stays safe.
func (b *pgBackend) alive() bool {
	if b.pgid <= 0 {
		return false
	}
	err := syscall.Kill(-b.pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func (b *pgBackend) killAll() { b.signal(syscall.SIGKILL) }

func (b *pgBackend) release() {}

func (b *pgBackend) reap() {}

// pgPlatform makes process-group trees.
type pgPlatform struct{}

func (pgPlatform) newTree(string) (backend, error) { return &pgBackend{}, nil }

func (pgPlatform) close() {}
