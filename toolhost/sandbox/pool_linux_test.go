package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// prime fills e's pool (a one-off start fills nothing: two do) and returns
// the pids of the launchers waiting.
func (e *confinedEnv) prime(t *testing.T) []int {
	t.Helper()
	for range 2 {
		if _, stderr, code := e.run(t, Default, "true"); code != 0 {
			t.Fatalf("true: exit %d: %s", code, stderr)
		}
	}
	testwait.For(t, "the pool to fill", func() bool { return e.sb.launchers.waiting() == poolSize })
	return e.waitingPids()
}

// pooled tells whether a command that reported pid ran in one of the
// launchers that waited: its pid is one of theirs; in the call's PID
// namespace, where it reports that namespace's, the first that waited (the
// one a launch takes) waits no more.
func (e *confinedEnv) pooled(waiting []int, pid int) bool {
	if e.sb.caps.PidNS {
		return len(waiting) > 0 && !slices.Contains(e.waitingPids(), waiting[0])
	}
	return slices.Contains(waiting, pid)
}

func (e *confinedEnv) waitingPids() []int {
	p := e.sb.launchers
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, w := range p.ready {
		pids = append(pids, w.proc.Pid)
	}
	return pids
}

// coldEnv is e's twin whose launchers start on the call's path.
func coldEnv(t *testing.T, e *confinedEnv) *confinedEnv {
	t.Helper()
	o := *e.sb.opts.Load()
	o.ColdLaunch = true
	sb, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if !e.sb.caps.PidNS {
		noNamespaces(sb)
	}
	return &confinedEnv{sb: sb, trees: e.trees, dir: e.dir, stdin: e.stdin}
}

// stateScript prints what a started process is given and could tell apart:
// its confinement, limits, cgroup, process group, fds, directory and
// environment; $$ is the launcher's pid (exec keeps it).
const stateScript = `echo "pid=$$"
grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters|Cap(Inh|Prm|Eff|Bnd|Amb)|SigIgn):' /proc/$$/status
cat /proc/$$/limits /proc/$$/cgroup
echo "pgrp=$(cut -d' ' -f5 /proc/$$/stat) sid=$(cut -d' ' -f6 /proc/$$/stat)"
for f in /proc/$$/fd/*; do echo "fd ${f##*/} $(readlink $f)"; done
echo "cwd=$(pwd)"
env | sort
cat /dev/shm/left 2>/dev/null; echo x > /dev/shm/left`

// normalState replaces what differs from call to call in stateScript's
// output (pids, the tree's name and cgroup, the pipes' inodes).
func normalState(out string) string {
	for _, re := range []struct{ re, to string }{
		{`(pid|pgrp)=\d+`, "$1=PID"},
		{proctree.EnvMarker + `=\S+`, proctree.EnvMarker + "=TREE"},
		{`(?m)^0::.*$`, "0::CGROUP"},
		{`pipe:\[\d+\]`, "pipe"},
		{`vcpnode-call-\w+`, "vcpnode-call-TMP"},
		{`vcpnode-sb-[\d.]+-\d+`, "vcpnode-sb-GROUP"},
	} {
		out = regexp.MustCompile(re.re).ReplaceAllString(out, re.to)
	}
	return out
}

// TestPooledLaunchGivesTheSameProcess: a command handed to a launcher that
// waited gets what one started for it gets — the same confinement,
// limits, process group, fds, directory and environment, a private
// /dev/shm — and runs in its own tree's cgroup.
func TestPooledLaunchGivesTheSameProcess(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, map[string]Spec{"limited": {Extends: Default, Pids: 64, Memory: "256M"}})
	cold := coldEnv(t, e)
	for _, profile := range []string{Default, Offline, "limited"} {
		waiting := e.prime(t)
		pooled, stderr, code := e.sh(t, profile, stateScript)
		if code != 0 {
			t.Fatalf("%s pooled: exit %d: %s", profile, code, stderr)
		}
		if pid := pidOf(t, pooled); !e.pooled(waiting, pid) {
			t.Fatalf("%s: the command ran as pid %d, not in one of the launchers that waited %v", profile, pid, waiting)
		}
		if !strings.Contains(pooled, "NoNewPrivs:\t1") || !strings.Contains(pooled, "Seccomp:\t2") {
			t.Errorf("%s pooled: not confined:\n%s", profile, pooled)
		}
		if own := regexp.MustCompile(`(?m)^0::(.*)$`).FindStringSubmatch(pooled); own == nil || !strings.Contains(own[1], "/vcpnode-") && own[1] != "/" {
			t.Errorf("%s pooled: not in a tree's cgroup:\n%s", profile, pooled)
		}
		want, stderr, code := cold.sh(t, profile, stateScript)
		if code != 0 {
			t.Fatalf("%s cold: exit %d: %s", profile, code, stderr)
		}
		if g, w := normalState(pooled), normalState(want); g != w {
			t.Errorf("%s: a pooled launch differs from a cold one:\n--- pooled\n%s\n--- cold\n%s", profile, g, w)
		}
	}
}

// TestSlowLauncherStartsStillFillThePool: a launcher that says it waits
// only after calls stopped waiting for it (a loaded machine's slow start)
// is kept, so the pool fills and a call takes one that waited.
func TestSlowLauncherStartsStillFillThePool(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.sb.launchers.callWait = time.Nanosecond // no start is ready that soon
	waiting := e.prime(t)
	out, stderr, code := e.sh(t, Default, stateScript)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if pid := pidOf(t, out); !e.pooled(waiting, pid) {
		t.Fatalf("the command ran as pid %d, not in one of the launchers that waited %v", pid, waiting)
	}
}

// TestPooledLaunchPlacesFds: the files of a start land on the fds their
// position names, gaps stay closed, and nothing of the launcher's is left.
func TestPooledLaunchPlacesFds(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	waiting := e.prime(t)
	extra, err := os.CreateTemp(t.TempDir(), "extra")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.sb.Wrap(Command{Tool: "probe", Profile: Default, Path: sh, Env: []string{"PATH=/usr/bin:/bin"}, Dir: e.dir,
		Args: []string{"sh", "-c", `echo "pid=$$"; read x; echo written >&5`}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	// 0 and 1 pipes, 2 closed, 3 and 4 closed, 5 the file.
	proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir, Files: []*os.File{inR, outW, nil, nil, nil, extra}})
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, line)
	if !e.pooled(waiting, pid) {
		t.Fatalf("not a pooled launch: pid %d, waiting %v", pid, waiting)
	}
	if host := proctreetest.HostPid(pid, e.dir); host != 0 {
		pid = host // it reported its PID namespace's
	}
	fds := openFds(t, pid)
	inW.Close()
	if _, err := proc.Wait(); err != nil {
		t.Fatal(err)
	}
	_ = tree.KillAndWait(5e9)
	tree.Release()
	want := map[int]string{0: "pipe:", 1: "pipe:", 2: "/dev/null", 5: extra.Name()}
	for n, target := range want {
		if !strings.HasPrefix(fds[n], target) {
			t.Errorf("fd %d is %q, want %q", n, fds[n], target)
		}
	}
	for n, target := range fds {
		if _, ok := want[n]; !ok {
			t.Errorf("fd %d (%s) is open", n, target)
		}
	}
	if data, _ := os.ReadFile(extra.Name()); string(data) != "written\n" {
		t.Errorf("the file at fd 5 holds %q", data)
	}
}

// openFds are pid's open fds and what they are, but those closed on exec.
func openFds(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, ent := range ents {
		n, _ := strconv.Atoi(ent.Name())
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, n))
		if err != nil {
			continue
		}
		var flags int64
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				flags, _ = strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			}
		}
		if flags&unix.O_CLOEXEC != 0 {
			continue
		}
		out[n], _ = os.Readlink(filepath.Join(dir, ent.Name()))
	}
	return out
}

// passedOn are the fds above 2 this process got from its runner and passes
// on to every child (a started launcher's command gets them too).
func passedOn(t *testing.T) map[int]bool {
	out := map[int]bool{}
	for n := range openFds(t, os.Getpid()) {
		if n > 2 {
			out[n] = true
		}
	}
	return out
}

// TestWaitingLauncherHoldsNothing: a launcher waiting for its launch has
// nothing of a call — its tree's marker for all environment, /dev/null and
// its socket for all fds — sits alone in a new tree, and ends by itself
// when the daemon's end of its socket closes.
func TestWaitingLauncherHoldsNothing(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.prime(t)
	p := e.sb.launchers
	p.mu.Lock()
	ws := slices.Clone(p.ready)
	p.ready = nil
	p.mu.Unlock()
	// A launcher with the namespaces shares its memory with their init,
	// which makes itself undumpable: its /proc files are then the user
	// namespace's root's, which an ordinary user's namespace does not map.
	inspect := os.Geteuid() == 0 || !e.sb.caps.PidNS
	if !inspect {
		t.Log("the environment and fds of a waiting launcher are not readable to an ordinary user here (undumpable); checked as root")
	}
	for _, w := range ws {
		if inspect {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", w.proc.Pid))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimRight(string(env), "\x00"); got != w.tree.Env() {
				t.Errorf("a waiting launcher's environment is %q, want only %q", got, w.tree.Env())
			}
			inherited := passedOn(t)
			for n, target := range openFds(t, w.proc.Pid) {
				if target != "/dev/null" && !(n == 3 && strings.HasPrefix(target, "socket:")) && !inherited[n] {
					t.Errorf("a waiting launcher holds fd %d: %s", n, target)
				}
			}
		}
		if dir := w.tree.CgroupDir(); dir != "" {
			want := []string{strconv.Itoa(w.proc.Pid)}
			if e.sb.caps.PidNS {
				// and the init of the namespaces it made before it waited.
				want = append(want, strconv.Itoa(initOf(t, w.proc.Pid)))
			}
			procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(procs)); !slices.Equal(got, want) {
				t.Errorf("its tree's cgroup holds %v, want only %v", got, want)
			}
		}
		w.conn.Close()
		state, err := w.proc.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !state.Exited() || state.ExitCode() != 0 {
			t.Errorf("a launcher whose socket closed ended with %v, want exit 0 by itself", state)
		}
		w.tree.Release()
	}
}

// TestWaitingLaunchersDieWithTheDaemon: when the daemon is killed, the
// launchers it had waiting end too.
func TestWaitingLaunchersDieWithTheDaemon(t *testing.T) {
	if os.Getenv("VCPNODE_TEST_POOL_DAEMON") == "1" {
		poolDaemon(t)
		return
	}
	t.Parallel()
	newConfinedEnv(t, nil) // skips where nothing can be confined
	cmd, pids := startPoolDaemon(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, pid := range pids {
		testwait.For(t, fmt.Sprintf("waiting launcher %d to end", pid), func() bool { return !running(pid) })
	}
}

// startPoolDaemon starts this test binary as poolDaemon and returns it
// with the pids of the launchers it has waiting; it is killed at the
// latest when the test ends.
func startPoolDaemon(t *testing.T) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWaitingLaunchersDieWithTheDaemon$", "-test.v")
	cmd.Env = append(os.Environ(), "VCPNODE_TEST_POOL_DAEMON=1")
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pids []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "waiting: "); ok {
			for _, f := range strings.Fields(rest) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			break
		}
	}
	if len(pids) != poolSize {
		t.Fatalf("the daemon named %v as its waiting launchers", pids)
	}
	return cmd, pids
}

// poolDaemon is TestWaitingLaunchersDieWithTheDaemon's daemon: it fills a
// pool, names its launchers and waits to be killed.
func poolDaemon(t *testing.T) {
	trees, err := proctree.New(proctree.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	e := newConfinedEnv(t, nil)
	e.trees = trees
	e.sb.opts.Load().Trees = trees
	pids := e.prime(t)
	fmt.Printf("waiting: %s\n", strings.Trim(fmt.Sprint(pids), "[]"))
	select {}
}

// running: pid is a process that has not ended (a zombie has; one of this
// process's is reaped).
func running(pid int) bool {
	var ws unix.WaitStatus
	if got, _ := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got == pid {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestPooledAttacksAreRefused: the privilege attacks get the same answers
// through a launcher that waited as through one started for them.
func TestPooledAttacksAreRefused(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	cold := coldEnv(t, e)
	for _, profile := range []string{Default, Offline} {
		want := cold.attack(t, profile, privilegeAttacks)
		waiting := e.prime(t)
		got := e.attack(t, profile, privilegeAttacks+"\nprint('pid: %d' % os.getpid())\n")
		pid, _ := strconv.Atoi(got["pid"])
		delete(got, "pid")
		if !e.pooled(waiting, pid) {
			t.Fatalf("%s: the attack ran as pid %d, not in one of the launchers that waited %v", profile, pid, waiting)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: pooled %v, cold %v", profile, got, want)
		}
		if got["CapEff"] != "none" || got["reboot"] != "EPERM" || got["clone3"] != "ENOSYS" {
			t.Errorf("%s: a pooled launch kept privilege: %v", profile, got)
		}
	}
}

// pidOf is the pid a stateScript-like output names.
func pidOf(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pid in %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// TestPooledLaunchReportsExecErrors: a command a launcher that waited
// cannot exec, or a working directory it cannot enter, fails the start as
// a plain start fails, and that launcher's tree ends.
func TestPooledLaunchReportsExecErrors(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	missing := filepath.Join(e.dir, "missing")
	for _, c := range []struct{ path, dir string }{{missing, e.dir}, {"/bin/true", missing}} {
		waiting := e.prime(t)
		r, err := e.sb.Wrap(Command{Tool: "probe", Profile: Default, Path: c.path, Args: []string{c.path}, Dir: e.dir})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.StartProcess(e.trees, &os.ProcAttr{Dir: c.dir})
		r.Close()
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Path != c.path || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("start %s in %s: %v (%T), want a *PathError for it that is ErrNotExist", c.path, c.dir, err, err)
		}
		// The first that waited took the start (they are taken in turn).
		if running(waiting[0]) || !running(waiting[1]) {
			t.Errorf("of the launchers that waited %v, the first should have ended, the second wait", waiting)
		}
	}
}
