package proctree

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// leafEnv makes the test binary a daemon for TestDaemonMovesIntoALeaf;
// its value lists the controllers to enable for the trees' cgroups.
const leafEnv = "PROCTREE_TEST_LEAF_CONTROLLERS"

// leafReport is what that daemon saw.
type leafReport struct {
	Dir1, Why1, Dir2, Why2 string
	TreeDir                string
	TreeAlive, TreeDirLeft bool
	Err                    string
}

func init() {
	if c, ok := os.LookupEnv(leafEnv); ok {
		leafControllers = strings.Fields(c)
		r := runLeafDaemon()
		_ = json.NewEncoder(os.Stdout).Encode(r)
		_, _ = io.Copy(io.Discard, os.Stdin) // stay in the leaf until the test has looked
		os.Exit(0)
	}
}

// runLeafDaemon makes a Manager, runs and kills a tree, then makes a second
// Manager, as a daemon (and a reload) started into a cgroup of its own would.
func runLeafDaemon() (r leafReport) {
	log := zerolog.New(os.Stderr)
	m1, err := New(Options{Mode: ModeCgroup, Log: log})
	if err != nil {
		return leafReport{Err: err.Error()}
	}
	defer m1.Close()
	r.Dir1, r.Why1 = m1.TreesCgroup()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return leafReport{Err: err.Error()}
	}
	cmd, tree, err := m1.StartCmd(func() *exec.Cmd { return exec.Command(sleep, "600") })
	if err != nil {
		return leafReport{Err: err.Error()}
	}
	r.TreeDir = tree.CgroupDir()
	kerr := tree.KillAndWait(5 * time.Second)
	_ = cmd.Wait()
	r.TreeAlive = tree.Alive()
	tree.Release()
	_, serr := os.Stat(r.TreeDir)
	r.TreeDirLeft = serr == nil
	m2, err := New(Options{Mode: ModeCgroup, Log: log})
	if err != nil {
		return leafReport{Err: err.Error()}
	}
	defer m2.Close()
	r.Dir2, r.Why2 = m2.TreesCgroup()
	if kerr != nil {
		r.Err = kerr.Error()
	}
	return r
}

// TestDaemonMovesIntoALeaf: a daemon started into a cgroup v2 of its own
// together with another process (a wrapper shell, as systemd's Delegate=yes
// gives a unit) moves both into its leaf, enables for the trees' cgroups
// what its cgroup offers, makes the trees as the leaf's siblings and kills
// them as before; a second Manager of the process reuses the leaf.
//
// This machine's cgroup v2 offers hugetlb only (memory, pids and cpu are
// bound to cgroup v1 hierarchies), so the daemon is told to enable what is
// offered: memory, pids and cpu on cgroup v2 are not exercised here.
func TestDaemonMovesIntoALeaf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup v2 to start a daemon in needs root here")
	}
	own, _, _, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	offerHugetlb(t, own)
	parent := leafTestCgroup(t, own, "leaftest-")
	wrapper := exec.Command("sleep", "600")
	startIn(t, wrapper, parent)
	t.Cleanup(func() { _ = wrapper.Process.Kill(); _ = wrapper.Wait() })
	daemonInLeaf(t, parent, wrapper.Process.Pid, "")
}

// TestDaemonMovesIntoALeafAsUser is TestDaemonMovesIntoALeaf for a daemon
// run by an ordinary user in a cgroup delegated to it: the test binary runs
// again as uid nobody in that cgroup, and is itself the process sharing the
// daemon's cgroup. Then again in a cgroup whose cgroup.subtree_control was
// not given to the user: the daemon moves into its leaf all the same, and
// says (in its log and TreesCgroup) that it cannot enable hugetlb, and why.
func TestDaemonMovesIntoALeafAsUser(t *testing.T) {
	own, _, _, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	if os.Geteuid() != 0 {
		switch name := filepath.Base(own); {
		case strings.HasPrefix(name, leafUserPrefix):
			daemonInLeaf(t, own, os.Getpid(), "")
		case strings.HasPrefix(name, leafNoCtlPrefix):
			if c, _ := os.ReadFile(filepath.Join(own, "cgroup.controllers")); len(strings.Fields(string(c))) == 0 {
				t.Skip("no controller offered to this cgroup v2 here: none the daemon could fail to enable")
			}
			daemonInLeaf(t, own, os.Getpid(), "cannot enable hugetlb (permission denied) in "+own+"/cgroup.subtree_control")
		default:
			t.Skip("an ordinary user's run: the cgroup it is in is not one made for this test")
		}
		return
	}
	offerHugetlb(t, own)
	for _, prefix := range []string{leafUserPrefix, leafNoCtlPrefix} {
		dir := leafTestCgroup(t, own, prefix)
		if prefix == leafNoCtlPrefix {
			if err := os.Chown(filepath.Join(dir, "cgroup.subtree_control"), 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		testuser.RerunIn(t, "^TestDaemonMovesIntoALeafAsUser$", []string{dir})
	}
}

// The cgroups TestDaemonMovesIntoALeafAsUser delegates: the run as nobody
// finds itself in one of them by its name.
const (
	leafUserPrefix  = "leaftest-user-"
	leafNoCtlPrefix = "leaftest-noctl-"
)

// leafTestCgroup makes a cgroup below own for the test, delegated to
// nobody, and fails t if it is still there after the test.
func leafTestCgroup(t *testing.T, own, prefix string) string {
	t.Helper()
	dir := filepath.Join(own, prefix+strconv.Itoa(os.Getpid()))
	// Registered first, so run last: after Delegate's clean-up.
	t.Cleanup(func() {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("the test's cgroup %s is left", dir)
		}
	})
	if dirs := testuser.Delegate(t, filepath.Base(dir), own); len(dirs) == 0 {
		t.Skipf("cannot make a cgroup v2 below %s", own)
	}
	return dir
}

// startIn starts cmd in the cgroup directory dir.
func startIn(t *testing.T, cmd *exec.Cmd, dir string) {
	t.Helper()
	attr, err := escapeAttr(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(attr.CgroupFD)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// startLeafDaemon starts this test binary as a leaf daemon in the cgroup
// directory dir, told to enable controllers, and returns what it reported
// once it ran its trees (it then stays until stdin closes) and its log.
func startLeafDaemon(t *testing.T, dir string, controllers []string) (daemon *exec.Cmd, stdin io.WriteCloser, r leafReport, logged func() string) {
	t.Helper()
	daemon = exec.Command("/proc/self/exe", "-test.run=^$")
	daemon.Env = append(os.Environ(), leafEnv+"="+strings.Join(controllers, " "))
	stdin, err := daemon.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// A file, not a buffer: it is read while the daemon runs.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stderr.Close() })
	daemon.Stderr = stderr
	logged = func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	startIn(t, daemon, dir)
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("the daemon said nothing: %v\n%s", err, logged())
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return daemon, stdin, r, logged
}

// daemonInLeaf starts a daemon in parent, where the process wrapper is
// already, and checks that both end in the leaf with the trees' cgroups
// next to it; then once more with the daemon started in the leaf. With
// wantWhy, the daemon cannot enable controllers and must say so.
func daemonInLeaf(t *testing.T, parent string, wrapper int, wantWhy string) {
	b, _ := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	offered := strings.Fields(string(b))
	var missing []string
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(offered, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		t.Logf("%s not offered to cgroup v2 here (controllers: %q): their enabling is not exercised on this machine, "+
			"the mechanism is proven with what is offered", strings.Join(missing, ", "), offered)
	}

	// The second run is the daemon restarted by the wrapper, in the leaf
	// (the former cgroup, now with controllers enabled for its children,
	// takes no process): it finds the trees' place from there.
	leaf := filepath.Join(parent, leafName)
	for run, dir := range []string{parent, leaf} {
		t.Logf("daemon run %d, started in %s", run+1, dir)
		daemon, stdin, r, logged := startLeafDaemon(t, dir, offered)
		t.Logf("daemon: %+v; its log: %s", r, logged())
		if r.Err != "" {
			t.Fatalf("the daemon failed: %s", r.Err)
		}
		if warned := strings.Contains(logged(), "fall back to cgroup v1 groups or rlimits: "+wantWhy); warned != (wantWhy != "") {
			t.Errorf("the daemon's warning that limits fall back: logged %v, want %v", warned, wantWhy != "")
		}

		if left := cgroupPids(parent); len(left) > 0 {
			t.Errorf("processes %v are still in %s", left, parent)
		}
		inLeaf := cgroupPids(leaf)
		for name, pid := range map[string]int{"daemon": daemon.Process.Pid, "wrapper": wrapper} {
			if !slices.Contains(inLeaf, pid) {
				t.Errorf("the %s (%d) is not in the leaf %s (it holds %v)", name, pid, leaf, inLeaf)
			}
		}
		ctl, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		for _, c := range offered {
			if wantWhy == "" && !slices.Contains(strings.Fields(string(ctl)), c) {
				t.Errorf("%s is not enabled in %s/cgroup.subtree_control (%q)", c, parent, ctl)
			}
		}
		for i, got := range []struct{ dir, why string }{{r.Dir1, r.Why1}, {r.Dir2, r.Why2}} {
			if got.dir != parent || got.why != wantWhy {
				t.Errorf("Manager %d makes trees in %q (why %q), want %s (why %q)", i+1, got.dir, got.why, parent, wantWhy)
			}
		}
		if filepath.Dir(r.TreeDir) != parent || !strings.HasPrefix(filepath.Base(r.TreeDir), cgroupPrefix) {
			t.Errorf("the tree's cgroup %q is not a sibling of the leaf in %s", r.TreeDir, parent)
		}
		if r.TreeAlive || r.TreeDirLeft {
			t.Errorf("the tree was not killed and removed (alive %v, cgroup left %v)", r.TreeAlive, r.TreeDirLeft)
		}
		stdin.Close()
		if err := daemon.Wait(); err != nil {
			t.Errorf("the daemon: %v", err)
		}
	}
}

// offerHugetlb enables hugetlb for the children of own (this machine's
// root cgroup, whose children are offered nothing else) so that the daemon
// has a controller to enable. It stays offered: another run of these tests
// (two copies of the suite at once) may be using it, and taking it back
// under that run fails it. Offering it sets no limit on any cgroup.
func offerHugetlb(t *testing.T, own string) {
	ctl := filepath.Join(own, "cgroup.subtree_control")
	b, _ := os.ReadFile(ctl)
	if slices.Contains(strings.Fields(string(b)), "hugetlb") {
		return
	}
	c, _ := os.ReadFile(filepath.Join(own, "cgroup.controllers"))
	if !slices.Contains(strings.Fields(string(c)), "hugetlb") {
		return
	}
	if err := os.WriteFile(ctl, []byte("+hugetlb"), 0); err != nil {
		t.Logf("cannot offer hugetlb below %s (%v): the daemon finds nothing to enable", own, err)
		return
	}
	t.Logf("hugetlb offered below %s for the test (no limit set); left so, for runs alongside", own)
}

// TestDaemonLeavesASharedCgroupAlone: a daemon whose cgroup v2 holds another
// process and is not marked delegated (a root daemon started by hand in a
// login session's scope, or a root test run) moves nobody, makes the trees
// in its cgroup as before, and says why no controller is enabled for them.
func TestDaemonLeavesASharedCgroupAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup v2 to start a daemon in needs root here")
	}
	own, _, _, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	dir := filepath.Join(own, "leaftest-shared-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup v2 below %s: %v", own, err)
	}
	t.Cleanup(func() { // after the processes' clean-ups below
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if !testwait.Poll(ctx, func() bool {
			_ = syscall.Rmdir(filepath.Join(dir, leafName)) // made only where the test fails
			return syscall.Rmdir(dir) == nil
		}) {
			t.Errorf("the test's cgroup %s is left", dir)
		}
	})
	wrapper := exec.Command("sleep", "600")
	startIn(t, wrapper, dir)
	t.Cleanup(func() { _ = wrapper.Process.Kill(); _ = wrapper.Wait() })
	daemon, stdin, r, _ := startLeafDaemon(t, dir, []string{"hugetlb"})
	if r.Err != "" || r.Dir1 != dir || !strings.Contains(r.Why1, "is not marked delegated") {
		t.Errorf("the daemon: %+v; want its trees in %s and why it enables nothing", r, dir)
	}
	in := cgroupPids(dir)
	for name, pid := range map[string]int{"daemon": daemon.Process.Pid, "wrapper": wrapper.Process.Pid} {
		if !slices.Contains(in, pid) {
			t.Errorf("the %s (%d) was moved out of %s (it holds %v)", name, pid, dir, in)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, leafName)); err == nil {
		t.Errorf("a leaf was made in a cgroup the daemon only shares")
	}
	stdin.Close()
}
