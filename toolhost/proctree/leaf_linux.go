package proctree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// leafName is the cgroup the daemon's own processes move to when its
// cgroup v2 is not the root: the kernel enables controllers for a cgroup's
// children only while it holds no process ("no internal processes"), so
// the trees' cgroups and this leaf are siblings below the daemon's former
// cgroup. It does not start with cgroupPrefix: the stale cleanup never
// touches it, and the next daemon of the same unit finds and reuses it.
const leafName = "vcpnode.daemon"

// leafControllers are what the sandbox limits through the trees' cgroups;
// each one the cgroup offers is enabled for its children.
var leafControllers = []string{"memory", "pids", "cpu"}

// treesParent is where the trees' cgroups go for a daemon in dir (rel as
// /proc/self/cgroup shows it): dir itself, or, when the daemon already sits
// in the leaf (a second Manager of the process), the leaf's parent.
func treesParent(dir, rel string) (string, string) {
	if filepath.Base(rel) == leafName {
		return filepath.Dir(dir), filepath.Dir(rel)
	}
	return dir, rel
}

// settleLeaf empties dir of processes into its leaf and enables
// leafControllers for dir's children. It returns what is not enabled and
// why ("" when nothing is missing or dir is the root cgroup, whose own
// processes do not keep controllers from its children).
func settleLeaf(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.type")); err != nil {
		return "" // the root cgroup has no type
	}
	// Other processes are moved only out of a cgroup delegated to the
	// daemon: one it merely shares (a login session's scope) is not its own.
	if others := slices.DeleteFunc(cgroupPids(dir), func(pid int) bool { return pid == os.Getpid() }); len(others) > 0 && !delegated(dir) {
		return fmt.Sprintf("the daemon's cgroup %s holds %d other processes and is not marked delegated "+
			"(systemd's Delegate=yes marks it with trusted.delegate or user.delegate): they are left there, and the "+
			"kernel enables no controllers for the children of a cgroup holding processes", dir, len(others))
	}
	if err := moveToLeaf(dir); err != nil {
		return "the daemon's cgroup still holds processes, which keeps the kernel from enabling controllers for its children: " + err.Error()
	}
	return enableControllers(dir)
}

// delegated reports whether dir is marked as delegated, as systemd marks a
// unit's cgroup under Delegate=yes (trusted.delegate; user.delegate from a
// user's manager).
func delegated(dir string) bool {
	for _, name := range []string{"trusted.delegate", "user.delegate"} {
		buf := make([]byte, 8)
		if n, err := syscall.Getxattr(dir, name, buf); err == nil && string(buf[:n]) == "1" {
			return true
		}
	}
	return false
}

// moveToLeaf moves every process of dir (the daemon, and whatever shares
// its cgroup: a wrapper shell) into dir's leaf. A process forked meanwhile
// lands in dir and is moved in the next round.
func moveToLeaf(dir string) error {
	leaf := filepath.Join(dir, leafName)
	var last error
	for range 10 {
		pids := cgroupPids(dir)
		if len(pids) == 0 {
			return nil
		}
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make %s: %w", leaf, err)
		}
		for _, pid := range pids {
			err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
			if err != nil && !errors.Is(err, syscall.ESRCH) {
				last = fmt.Errorf("move process %d into %s: %w", pid, leaf, err)
			}
		}
		if last != nil {
			return last
		}
	}
	return fmt.Errorf("processes keep appearing in %s", dir)
}

// enableControllers enables in dir's cgroup.subtree_control each of
// leafControllers that dir's cgroup.controllers offers.
func enableControllers(dir string) string {
	offered, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	ctl := filepath.Join(dir, "cgroup.subtree_control")
	enabled, _ := os.ReadFile(ctl)
	var failed []string
	for _, name := range leafControllers {
		if !slices.Contains(strings.Fields(string(offered)), name) || slices.Contains(strings.Fields(string(enabled)), name) {
			continue
		}
		if err := os.WriteFile(ctl, []byte("+"+name), 0); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the file is named once, below
			}
			failed = append(failed, name+" ("+err.Error()+")")
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return "cannot enable " + strings.Join(failed, ", ") + " in " + ctl
}

// cgroupPids lists the processes of the cgroup directory dir.
func cgroupPids(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// TreesCgroup is the cgroup v2 directory the trees' cgroups are made in
// (ModeCgroup; "" otherwise), and, when memory, pids or cpu could not be
// enabled for them there, why.
func (m *Manager) TreesCgroup() (dir, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cg, ok := m.plat.(*cgroupPlatform); ok {
		return cg.dir, cg.leafWhy
	}
	return "", ""
}
