package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/internal/vmtest"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// guestTests are the tests TestCgroupV2InVM runs in the guest: there the
// trees' own cgroup v2 holds memory, pids and cpu, so the tests that skip
// on a machine whose controllers are cgroup v1's run for real.
const guestTests = "^(TestLimitsOnTheTreesCgroupV2|TestAttackCgroupEscape|TestGuest.*)$"

// TestCgroupV2InVM runs the limit tests on a kernel whose cgroup v2 has
// the memory, pids and cpu controllers (mounted with nsdelegate), in a
// virtual machine (internal/vmtest): as root in a delegated cgroup, as
// systemd starts a unit with Delegate=yes, and again as an ordinary user
// in a cgroup delegated to it (TestGuestLimitsAsOrdinaryUser).
func TestCgroupV2InVM(t *testing.T) {
	t.Parallel()
	vmtest.Run(t, vmtest.Options{Run: guestTests})
}

// guestEnv is a confined env whose trees have cgroups of their own; it
// fails t where the cgroup v2 limits do not hold, which in the guest they
// must.
func guestEnv(t *testing.T, specs map[string]Spec) *confinedEnv {
	t.Helper()
	vmtest.NeedGuest(t, "TestCgroupV2InVM")
	e := newConfinedEnvMode(t, specs, proctree.ModeCgroup)
	if c := e.sb.Capabilities(); c.Memory != "cgroup v2" || c.Pids != "cgroup v2" || c.CPU != "cgroup v2" || c.LimitsWhy != "" {
		t.Fatalf("memory by %q, pids by %q, cpu by %q, want cgroup v2 for all: %s", c.Memory, c.Pids, c.CPU, c.LimitsWhy)
	}
	return e
}

// TestGuestLimitsHeldByCgroupV2: in the guest the sandbox finds memory,
// pids and cpu held by the trees' own cgroup v2, the protections
// `vcpnode sandbox check` prints say so, one line each, and its probe (a
// command started under the profile) sees every protection it checks.
func TestGuestLimitsHeldByCgroupV2(t *testing.T) {
	t.Parallel()
	e := guestEnv(t, map[string]Spec{"limited": {Extends: Default, Memory: "64MiB", Pids: 16, CPU: 0.5}})
	ps, err := e.sb.Protections("limited", os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range ps {
		t.Logf("%-13s %s (%s) %s", p.State, p.Name, p.Needs, p.Detail)
		if strings.HasSuffix(p.Name, " limit of the whole tree") {
			seen++
			if p.State != StateEnforced || !strings.HasPrefix(p.Detail, "cgroup v2") {
				t.Errorf("%s: %s, %q; want enforced by cgroup v2", p.Name, p.State, p.Detail)
			}
		}
	}
	if seen != 3 {
		t.Errorf("%d limit lines, want memory, pids and cpu", seen)
	}
	// The command also starts a probe under the profile; a line of it not
	// enforced fails the check.
	probe, err := e.sb.Probe(e.trees, "limited", os.Geteuid())
	if err != nil || len(probe) == 0 {
		t.Fatalf("probe: %v (%d lines)", err, len(probe))
	}
	for _, p := range probe {
		t.Logf("%-13s %s %s", p.State, p.Name, p.Detail)
		if p.State != StateEnforced {
			t.Errorf("%s: %s (%s)", p.Name, p.State, p.Detail)
		}
	}
}

// spin is a busy loop that runs until it is killed.
const spin = "while :; do :; done"

// TestGuestCPUThrottled: a busy loop under cpu = 0.5 runs in a tree whose
// cgroup has cpu.max "50000 100000" from its first instruction (the
// launcher's too: a smaller share slows an emulated guest's start), and
// the kernel throttles it (cpu.stat nr_throttled grows; no timing asserted).
func TestGuestCPUThrottled(t *testing.T) {
	t.Parallel()
	e := guestEnv(t, map[string]Spec{"slow": {Extends: Default, CPU: 0.5}})
	for _, env := range []struct {
		name string
		e    *confinedEnv
	}{{"waiting launcher", e}, {"launcher started for the call", coldEnv(t, e)}} {
		t.Run(env.name, func(t *testing.T) {
			if env.e == e {
				e.prime(t)
			}
			r, err := env.e.sb.Wrap(Command{Tool: "probe", Profile: "slow", Path: "/bin/sh", Args: []string{"sh", "-c", spin},
				Env: []string{"PATH=/usr/bin:/bin"}, Dir: env.e.dir})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer devnull.Close()
			proc, tree, err := r.StartProcess(env.e.trees, &os.ProcAttr{Dir: env.e.dir, Files: []*os.File{devnull, devnull, devnull}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := tree.KillAndWait(5e9); err != nil {
					t.Error(err)
					_ = proc.Kill()
				}
				_, _ = proc.Wait()
				tree.Release()
			}()
			dir := tree.CgroupDir()
			if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err != nil || strings.TrimSpace(string(b)) != "50000 100000" {
				t.Errorf("%s/cpu.max = %q (%v), want 50000 100000", dir, b, err)
			}
			testwait.For(t, "the busy loop to be throttled", func() bool {
				return counter(filepath.Join(dir, "cpu.stat"), "nr_throttled") > 0
			})
			b, _ := os.ReadFile(filepath.Join(dir, "cpu.stat"))
			t.Logf("cpu.stat: %s", strings.Join(strings.Fields(string(b)), " "))
		})
	}
}

// TestGuestRefusesALimitTheKernelRefuses: cpu = 0.005 asks for 500 µs per
// 100 ms, below the kernel's 1 ms floor: its write of cpu.max fails
// (EINVAL), and the call is refused naming the limit and the file, before
// the command ran — from a waiting launcher and from one started for it.
func TestGuestRefusesALimitTheKernelRefuses(t *testing.T) {
	t.Parallel()
	e := guestEnv(t, map[string]Spec{"tiny": {Extends: Default, CPU: 0.005}})
	refusedBeforeTheCommand(t, e, coldEnv(t, e), "tiny", "cpu", "cpu limit 0.005 could not be applied", "/cpu.max", "invalid argument")
}

// TestGuestLimitsAsOrdinaryUser runs the memory and pids limits and the
// cgroup escape again as uid nobody, in a cgroup of the guest's system.slice
// delegated to it, as systemd's Delegate=yes gives a user's daemon one.
func TestGuestLimitsAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	vmtest.NeedGuest(t, "TestCgroupV2InVM")
	if os.Geteuid() != 0 {
		t.Skip("already an ordinary user: the tests of this run are the user's")
	}
	dirs := testuser.Delegate(t, "vcpnode-user-"+strconv.Itoa(os.Getpid())+".service", vmtest.Slice)
	if len(dirs) == 0 {
		t.Fatalf("cannot delegate a cgroup below %s", vmtest.Slice)
	}
	testuser.RerunIn(t, "^(TestLimitsOnTheTreesCgroupV2|TestAttackCgroupEscape|TestGuestLimitsHeldByCgroupV2)$", dirs)
}

// TestGuestFenceHoldsWhereLandlockWouldNot: under a profile that grants
// writing the cgroup hierarchy (an owner's mistake; Landlock then lets the
// writes through), a confined process still cannot move itself out of its
// tree's cgroup: on a cgroup2 mounted with nsdelegate its tree's leader
// started in a cgroup namespace rooted at the tree's cgroup, and the
// kernel refuses a move to a cgroup outside it.
func TestGuestFenceHoldsWhereLandlockWouldNot(t *testing.T) {
	t.Parallel()
	e := guestEnv(t, map[string]Spec{"cgwrite": {Extends: Default, Write: []string{"/sys/fs/cgroup"}}})
	targets := cgroupTargets(t, e.trees)
	if len(targets) < 2 {
		t.Fatalf("want the daemon's cgroup and a sibling to attack, got %v", targets)
	}
	got := e.attack(t, "cgwrite", strings.Replace(cgroupAttack, "TARGETS", pyDict(targets), 1))
	for name := range targets {
		if got[name] == "ok" || got[name] == "" {
			t.Errorf("moving into the %s answered %q, want it refused", name, got[name])
		}
	}
	if !inTree(got["cgroups"]) {
		t.Errorf("the process left its tree's cgroup: %s", got["cgroups"])
	}
	t.Logf("answers: %v", got)
}
