//go:build !linux

package proctree

// Owns cannot tell here: no process belongs to a tree as far as it knows.
func (m *Manager) Owns(pid int) bool { return false }

// Fenced: no cgroup namespaces here.
func (m *Manager) Fenced() bool { return false }
