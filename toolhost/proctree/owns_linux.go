package proctree

import (
	"bytes"
	"os"
	"strconv"
)

// Owns reports whether pid belongs to one of the Manager's trees: it
// descends from the daemon, sits in one of its tree cgroups, or carries
// its trees' marker. The control socket asks, so that a tool cannot
// approve its own calls.
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
	proc := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(proc + "/cgroup"); err == nil && bytes.Contains(b, []byte("/"+cgroupPrefix+m.id+"-")) {
		return true
	}
	if b, err := os.ReadFile(proc + "/environ"); err == nil {
		for _, kv := range bytes.Split(b, []byte{0}) {
			if bytes.HasPrefix(kv, []byte(EnvMarker+"="+m.id+"-")) {
				return true
			}
		}
	}
	return false
}
