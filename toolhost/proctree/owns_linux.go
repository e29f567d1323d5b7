package proctree

import (
	"bytes"
	"os"
	"strconv"
)

// Owns reports whether pid is a process of the Manager's trees, by what
// the process can neither shed nor forge: it sits in one of the trees'
// cgroups, or it descends from the daemon. The daemon is a child subreaper
// in both Linux modes, so an orphan of a tree is re-parented to the daemon
// (or to a subreaper that is itself a descendant), never to init; a tree's
// cgroup namespace or the launcher's syscall filter keeps its processes in
// their cgroup. The environment marker is not asked: a process clears its
// environment at will. The control socket asks, so that a tool cannot use
// it.
func (m *Manager) Owns(pid int) bool {
	self := os.Getpid()
	if pid <= 1 || pid == self {
		return false
	}
	buf := make([]byte, 0, 512)
	for p, hops := pid, 0; p > 1 && hops < 4096; hops++ {
		pi, ok := readStat(p, buf)
		if !ok {
			break
		}
		if pi.ppid == self {
			return true
		}
		p = pi.ppid
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	return err == nil && bytes.Contains(b, []byte("/"+cgroupPrefix+m.id+"-"))
}

// Fenced reports whether new trees start in a cgroup namespace of their
// own, which the kernel keeps them from leaving (see fence_linux.go).
func (m *Manager) Fenced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	cg, ok := m.plat.(*cgroupPlatform)
	return ok && cg.fence
}
