package sandbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// startLimited starts argv under profile as a tool's command and waits for
// its whole tree; err is the start's error, else what Explain makes of the
// run (its limits reached), read after the tree was released as the hosts
// do. out is the command's stdout.
func (e *confinedEnv) startLimited(t *testing.T, profile string, argv ...string) (out string, err error) {
	t.Helper()
	r, err := e.sb.Wrap(Command{Tool: "probe", Profile: profile, Path: argv[0], Args: argv, Env: os.Environ(), Dir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir, Files: []*os.File{nil, outW, errFile}})
	outW.Close()
	if err != nil {
		return "", r.Explain(err)
	}
	b, _ := io.ReadAll(outR) // the command's own end; its leftovers hold no copy (it closes stdout)
	defer func() {
		if stderr, _ := os.ReadFile(errFile.Name()); len(stderr) > 0 {
			t.Logf("stderr: %s", stderr)
		}
	}()
	state, werr := proc.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	if r.Exceeded() {
		tree.KillAll() // what the hosts do: a fork loop never ends by itself
	}
	if err := tree.KillAndWait(5e9); err != nil {
		t.Fatal(err)
	}
	tree.Release()
	var exit error
	if !state.Success() {
		exit = errors.New(state.String())
	}
	stderr, _ := os.ReadFile(errFile.Name())
	return string(b), r.Explain(exit, stderr)
}

// forkLoop forks children that sleep until it cannot fork any more, then
// prints how many it made and exits (its children stay, as a fork bomb's).
const forkLoop = `
import os, sys, time
n = 0
while n < 1000:
    try:
        pid = os.fork()
    except OSError as e:
        break
    if pid == 0:
        os.close(1)
        time.sleep(120)
        os._exit(0)
    n += 1
print(n)
sys.stdout.flush()
`

// allocate touches 1 GiB, a page at a time, and says so if it got there.
const allocate = `
b = bytearray(1 << 30)
for i in range(0, len(b), 4096):
    b[i] = 1
print("allocated")
`

// TestLimitsHoldFromTheFirstFork: a fork loop under pids = 16 makes fewer
// than 16 processes (the limit held before its first fork) and the call's
// error names the pids limit; 1 GiB allocated under memory = 64MiB is
// killed and the error names the memory limit — whether a waiting launcher
// or one started for the call ran it, and after the tree's cgroup is gone.
func TestLimitsHoldFromTheFirstFork(t *testing.T) {
	t.Parallel()
	limitCases(t, newConfinedEnv(t, map[string]Spec{"forks": {Extends: Default, Pids: 16}, "small": {Extends: Default, Memory: "64MiB"}}))
}

// TestLimitsOnTheTreesCgroupV2 is the same where the tree's own cgroup v2
// holds the limits (written before the launcher runs there), and says why
// not where it cannot: on a hybrid machine memory and pids are cgroup v1's.
func TestLimitsOnTheTreesCgroupV2(t *testing.T) {
	t.Parallel()
	e := newConfinedEnvMode(t, map[string]Spec{"forks": {Extends: Default, Pids: 16}, "small": {Extends: Default, Memory: "64MiB"}}, proctree.ModeCgroup)
	if c := e.sb.Capabilities(); c.Memory != "cgroup v2" && c.Pids != "cgroup v2" {
		t.Skipf("the trees' cgroup v2 holds neither a memory nor a pids limit here (memory by %q, pids by %q): %s", c.Memory, c.Pids, c.LimitsWhy)
	}
	limitCases(t, e)
}

// limitCases runs the fork loop and the allocation under e's "forks" and
// "small" profiles, from a waiting launcher and from one started for the call.
func limitCases(t *testing.T, e *confinedEnv) {
	py := python(t)
	for _, env := range []struct {
		name string
		e    *confinedEnv
	}{{"waiting launcher", e}, {"launcher started for the call", coldEnv(t, e)}} {
		t.Run(env.name, func(t *testing.T) {
			if env.e == e {
				e.prime(t)
			}
			caps := env.e.sb.Capabilities()
			t.Run("pids by "+caps.Pids, func(t *testing.T) {
				if !strings.HasPrefix(caps.Pids, "cgroup") {
					t.Skipf("no cgroup holds a pids limit here (%q): nothing counts refused forks", caps.Pids)
				}
				out, err := env.e.startLimited(t, "forks", py, "-c", forkLoop)
				n, cerr := strconv.Atoi(strings.TrimSpace(out))
				// The command's tree gets the profile's pids: the loop's
				// Python and its children. The sandbox's own tasks are
				// added to the limit written; its launcher's runtime
				// threads come and go by one or two.
				if got := n + 1; cerr != nil || got < 16-2 || got > 16+2 {
					t.Errorf("the fork loop's tree got %q more processes under pids = 16 (%s), want about 15", out, caps.Pids)
				}
				if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "pids limit 16 reached") {
					t.Errorf("want an error naming the pids limit, got %v", err)
				}
				t.Logf("%d forks, then: %v", n, err)
			})
			t.Run("memory by "+caps.Memory, func(t *testing.T) {
				if !strings.HasPrefix(caps.Memory, "cgroup") {
					t.Skipf("no cgroup holds a memory limit here (%q): nothing counts the kernel's kills", caps.Memory)
				}
				out, err := env.e.startLimited(t, "small", py, "-c", allocate)
				if strings.Contains(out, "allocated") {
					t.Errorf("1 GiB allocated under memory = 64MiB (%s)", caps.Memory)
				}
				if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "memory limit 64MiB reached: the kernel killed") {
					t.Errorf("want an error naming the memory limit, got %v", err)
				}
				t.Logf("%v", err)
			})
		})
	}
}

// TestLimitNotAppliedRefusesTheCall: where a limit's cgroup v2 file cannot
// be written (here: the controller is not enabled in the trees' cgroups,
// though the limiter was told it is), the call is refused with an error
// naming the limit and the file, and the command never runs — whether a
// waiting launcher or one started for the call would have run it.
func TestLimitNotAppliedRefusesTheCall(t *testing.T) {
	t.Parallel()
	e := newConfinedEnvMode(t, map[string]Spec{"forks": {Extends: Default, Pids: 16}}, proctree.ModeCgroup)
	own, _ := e.trees.TreesCgroup()
	if own == "" {
		t.Skip("the trees have no cgroup v2 here")
	}
	if ctl, _ := os.ReadFile(filepath.Join(own, "cgroup.subtree_control")); strings.Contains(string(ctl), "pids") {
		t.Skip("pids is enabled in the trees' cgroups here: its file is there to write")
	}
	cold := coldEnv(t, e)
	for _, sb := range []*Sandbox{e.sb, cold.sb} {
		sb.limits.v2["pids"] = true // as a daemon that found it enabled would
	}
	refusedBeforeTheCommand(t, e, cold, "forks", "pids", "pids limit 16 could not be applied", "/pids.max")
}

// refusedBeforeTheCommand runs a command under profile from a waiting
// launcher of e and from a launcher cold starts for the call: each call is
// refused as ErrLimitNotApplied with an error holding every want, the
// command never ran, and the launcher that waited is gone.
func refusedBeforeTheCommand(t *testing.T, e, cold *confinedEnv, profile, limit string, want ...string) {
	t.Helper()
	marker := filepath.Join(e.dir, "ran")
	for _, env := range []struct {
		name string
		e    *confinedEnv
	}{{"waiting launcher", e}, {"launcher started for the call", cold}} {
		t.Run(env.name, func(t *testing.T) {
			var waiting []int
			if env.e == e {
				waiting = e.prime(t)
			}
			_, err := env.e.startLimited(t, profile, "/bin/sh", "-c", "echo > "+marker)
			refused := errors.Is(err, ErrLimitNotApplied)
			for _, w := range want {
				refused = refused && err != nil && strings.Contains(err.Error(), w)
			}
			if !refused {
				t.Errorf("want the call refused naming %q, got %v", want, err)
			}
			if _, serr := os.Stat(marker); serr == nil {
				t.Errorf("the command ran without its %s limit", limit)
				os.Remove(marker)
			}
			if len(waiting) > 0 {
				testwait.For(t, "the launcher that waited to be gone", func() bool {
					_, err := os.Stat("/proc/" + strconv.Itoa(waiting[0]) + "/stat")
					return err != nil
				})
			}
			t.Logf("%v", err)
		})
	}
}

// TestLimitsAsOrdinaryUser runs the limit tests again as uid 65534 in
// cgroups delegated to it (a cgroup v2 one for its process trees, cgroup v1
// pids and memory groups for its limits, where this machine has them), as
// a daemon run by a user with systemd's Delegate=yes would find them.
func TestLimitsAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("already an ordinary user: the tests of this run are the user's")
	}
	v1 := v1Mounts()
	var parents []string
	// The cgroup v2 the trees live in, which proctree found (and made
	// the daemon's leaf beside) for this process.
	if trees, err := proctree.New(proctree.Options{Mode: proctree.ModeCgroup, Log: zerolog.Nop()}); err == nil {
		if dir, _ := trees.TreesCgroup(); dir != "" {
			parents = append(parents, dir)
		}
		trees.Close()
	}
	for _, c := range []string{"pids", "memory"} {
		if m, ok := v1[c]; ok {
			if own, err := ownGroup(m, c); err == nil {
				parents = append(parents, own)
			}
		}
	}
	dirs := testuser.Delegate(t, "vcpnode-limtest-"+strconv.Itoa(os.Getpid()), parents...)
	testuser.RerunIn(t, "^(TestLimitsHoldFromTheFirstFork|TestLimitsOnTheTreesCgroupV2|TestLimitNotAppliedRefusesTheCall)$", dirs)
}

// TestProbeAtOnce: sandboxes made at the same time each find a writable
// cgroup v1 hierarchy writable (a shared probe group made one remove the
// other's, which then fell back to rlimits).
func TestProbeAtOnce(t *testing.T) {
	t.Parallel()
	m, ok := v1Mounts()["pids"]
	if !ok {
		t.Skip("no cgroup v1 pids hierarchy here")
	}
	dir, err := ownGroup(m, "pids")
	if err != nil || !probe(dir) {
		t.Skipf("cannot make groups in this process's pids group %q here (%v)", dir, err)
	}
	failed := make(chan bool, 200)
	for range 8 {
		go func() {
			for range 25 {
				failed <- !probe(dir)
			}
		}()
	}
	n := 0
	for range 200 {
		if <-failed {
			n++
		}
	}
	if n > 0 {
		t.Errorf("%d of 200 probes at once found %s not writable", n, dir)
	}
}

// TestV2WhySaysWhatIsMissing: why the trees' cgroups hold no limit — a
// controller not offered to their parent (a hybrid machine's, bound to
// cgroup v1), or offered and not enabled, with why the daemon could not
// enable it — read from the parent's cgroup files.
func TestV2WhySaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		controllers string
		enabled     map[string]bool
		failed      string
		want        []string
	}{
		{"hugetlb\n", nil, "", []string{"memory, pids, cpu not offered", "controllers: hugetlb;"}},
		{"cpu memory pids\n", map[string]bool{"cpu": true}, "cannot enable memory (device or resource busy)",
			[]string{"memory, pids not enabled in", "(cannot enable memory (device or resource busy))"}},
		{"cpu memory pids\n", map[string]bool{"cpu": true, "memory": true, "pids": true}, "", nil},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(c.controllers), 0o644); err != nil {
			t.Fatal(err)
		}
		got := v2Why(dir, c.enabled, c.failed)
		if len(c.want) == 0 && got != "" {
			t.Errorf("%q, %v: %q, want nothing", c.controllers, c.enabled, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q, %v: %q, want it to say %q", c.controllers, c.enabled, got, w)
			}
		}
	}
	// This machine's own answer, as `sandbox check` prints it.
	if trees, err := proctree.New(proctree.Options{Log: zerolog.Nop()}); err == nil {
		defer trees.Close()
		c, _ := detect(trees)
		t.Logf("here: %q", c.LimitsWhy)
	}
}

// TestLimitGroupsOfTwoSandboxes: two sandboxes of one daemon (a reload
// makes a new one while calls of the old still run) never name the same
// limit group: the second's first group was "file exists" before.
func TestLimitGroupsOfTwoSandboxes(t *testing.T) {
	t.Parallel()
	_, first := detect(nil)
	_, second := detect(nil)
	if first.v1["pids"] == "" {
		t.Skip("no cgroup v1 pids group this process can make groups in")
	}
	p := Profile{Pids: 16}
	for i := range 3 {
		for _, l := range []*limiter{first, second} {
			g, _, err := l.make(p, &policy{})
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			t.Cleanup(g.remove)
		}
	}
}
