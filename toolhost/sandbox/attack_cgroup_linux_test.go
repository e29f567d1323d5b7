package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// cgroupAttack moves the confined process itself into each cgroup named in
// TARGETS (name → directory) by writing its pid into the cgroup.procs file
// there, then prints the cgroups it is in.
const cgroupAttack = `
for name, d in TARGETS.items():
    def move(d=d):
        with open(os.path.join(d, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    try_(name, move)
print("cgroups: " + open("/proc/self/cgroup").read().replace("\n", " "))
`

// cgroupTargets are where a tool that wants out of its tree's cgroup
// (to outlive its call, or to leave its memory limit) would move itself:
// the cgroup v2 the trees live in, the daemon's own group there (its leaf
// beside the trees), a sibling of the trees, and the daemon's group in the
// cgroup v1 memory hierarchy (the parent of a memory limit group). A
// target this machine lacks is left out.
func cgroupTargets(t *testing.T, trees *proctree.Manager) map[string]string {
	t.Helper()
	out := map[string]string{}
	if trees.Mode() == proctree.ModeCgroup {
		if own, _ := trees.TreesCgroup(); own != "" {
			out["v2 trees' parent"] = own
			b, _ := os.ReadFile("/proc/self/cgroup")
			for _, line := range strings.Split(string(b), "\n") {
				rel, ok := strings.CutPrefix(line, "0::")
				leaf := filepath.Join(own, filepath.Base(rel))
				if fi, err := os.Stat(leaf); ok && rel != "/" && leaf != own && err == nil && fi.IsDir() {
					out["v2 daemon's group"] = leaf
				}
			}
			sib := filepath.Join(own, "vcpnode-fencetest-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(len(t.Name())))
			if err := os.Mkdir(sib, 0o755); err == nil {
				t.Cleanup(func() { _ = syscall.Rmdir(sib) })
				out["v2 sibling group"] = sib
			} else {
				t.Logf("no sibling cgroup v2 to attack (%v)", err)
			}
		}
	}
	if m, ok := v1Mounts()["memory"]; ok {
		if own, err := ownGroup(m, "memory"); err == nil {
			out["v1 memory parent"] = own
		}
	}
	return out
}

// pyDict writes m as a Python dict literal of strings.
func pyDict(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{")
	for k, v := range m {
		b.WriteString(strconv.Quote(k) + ": " + strconv.Quote(v) + ", ")
	}
	b.WriteString("}")
	return b.String()
}

// TestAttackCgroupEscape: a confined process cannot move itself out of its
// call's cgroups — not into the daemon's cgroup, not into another cgroup
// beside its tree, not out of its memory limit group into the parent —
// whatever its uid, so it neither outlives its call nor sheds its limits.
// Unconfined, root can (the attack is real).
func TestAttackCgroupEscape(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, map[string]Spec{"limited": {Extends: Default, Memory: "256M"}})
	targets := cgroupTargets(t, e.trees)
	if len(targets) == 0 {
		t.Skip("no cgroup hierarchy mounted here: nothing to escape from")
	}
	t.Logf("targets: %v", targets)
	script := strings.Replace(cgroupAttack, "TARGETS", pyDict(targets), 1)
	profiles := []string{Default, Offline, "limited"}
	if mem := e.sb.Capabilities().Memory; !strings.HasPrefix(mem, "cgroup") {
		// An rlimit leaves no limit group to escape from (and a race-built
		// launcher cannot run under one).
		t.Logf("the limited profile is left out: its memory limit is %q here, not a cgroup", mem)
		profiles = profiles[:2]
	}
	for _, profile := range profiles {
		got := e.attack(t, profile, script)
		for name := range targets {
			if got[name] == "ok" || got[name] == "" {
				t.Errorf("%s: moving into the %s answered %q, want it refused", profile, name, got[name])
			}
		}
		if !inTree(got["cgroups"]) {
			t.Errorf("%s: the process left its tree's cgroup: %s", profile, got["cgroups"])
		}
	}
	if sib, ok := targets["v2 sibling group"]; ok && os.Geteuid() == 0 && e.trees.Mode() == proctree.ModeCgroup {
		// A plain child of the test: a tree's process, even unconfined,
		// is fenced in where cgroup2 is mounted with nsdelegate.
		src := strings.Replace(attackPrelude, "%s", syscallNumbers[runtime.GOARCH], 1) +
			strings.Replace(cgroupAttack, "TARGETS", pyDict(map[string]string{"sibling": sib}), 1)
		out, err := exec.Command(python(t), "-c", src).Output()
		if err != nil {
			t.Fatalf("the attack, unconfined: %v\n%s", err, out)
		}
		got := attackAnswers(string(out))
		if got["sibling"] != "ok" {
			t.Errorf("unconfined root: moving into a sibling answered %q (%s): the attack does not attack", got["sibling"], got["cgroups"])
		}
	}
}

// inTree reports whether a process's cgroups (the attack's printout) put
// it in a process tree's cgroup v2, or in no cgroup v2 of the daemon's
// (process trees without cgroups).
func inTree(cgroups string) bool {
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(cgroups, " ", "\n")))
	for sc.Scan() {
		if rel, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return strings.Contains(rel, "/vcpnode-") && !strings.Contains(rel, "fencetest") || !strings.Contains(rel, "vcpnode")
		}
	}
	return true
}
