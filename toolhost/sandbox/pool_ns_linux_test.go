package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// needNamespacesOn skips, saying why, where calls get no namespaces, here
// or in this run.
func (e *confinedEnv) needNamespacesOn(t *testing.T) {
	t.Helper()
	e.needNamespaces(t)
	if !e.sb.caps.PidNS {
		t.Skip("the namespaces are switched off for this run")
	}
}

// initOf is the init a waiting launcher made with its namespaces: its one
// child, forked by the thread that made them (a launcher counts as
// waiting once started, and makes them then).
func initOf(t testing.TB, launcher int) int {
	t.Helper()
	var kids []string
	testwait.For(t, fmt.Sprintf("waiting launcher %d to start its init", launcher), func() bool {
		kids = nil
		for _, tid := range tasksOf(launcher) {
			data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", launcher, tid))
			kids = append(kids, strings.Fields(string(data))...)
		}
		return len(kids) > 0 || !running(launcher)
	})
	if len(kids) != 1 {
		t.Fatalf("waiting launcher %d has children %v, want its init alone", launcher, kids)
	}
	pid, _ := strconv.Atoi(kids[0])
	return pid
}

// tasksOf are the threads of pid.
func tasksOf(pid int) []int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var tids []int
	for _, ent := range ents {
		if tid, err := strconv.Atoi(ent.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// nsOf are the PID namespace a waiting launcher's commands get and its
// mount namespace: those of its init, made by the launcher's thread that
// starts the command.
func nsOf(t testing.TB, launcher int) []string {
	t.Helper()
	init := initOf(t, launcher)
	var out []string
	for _, ns := range []string{"pid", "mnt"} {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", init, ns))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, link)
	}
	own, _ := os.Readlink("/proc/self/ns/pid")
	if out[0] == own {
		t.Fatalf("waiting launcher %d made no PID namespace: %v", launcher, out)
	}
	made := false
	for _, tid := range tasksOf(launcher) {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/task/%d/ns/pid_for_children", launcher, tid))
		made = made || link == out[0]
	}
	if !made {
		t.Fatalf("no thread of waiting launcher %d starts its commands in its init's PID namespace %s", launcher, out[0])
	}
	return out
}

// inNamespaces are the visible processes with a thread in any of
// namespaces (as the PID namespace of its children, or its mounts).
func inNamespaces(namespaces []string) []int {
	var found []int
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
	threads:
		for _, tid := range tasksOf(pid) {
			for _, ns := range []string{"pid", "pid_for_children", "mnt"} {
				if link, err := os.Readlink(fmt.Sprintf("/proc/%d/task/%d/ns/%s", pid, tid, ns)); err == nil && slices.Contains(namespaces, link) {
					found = append(found, pid)
					break threads
				}
			}
		}
	}
	return found
}

// waitingNamespaces are the inits and namespaces of e's waiting launchers,
// and every process in those namespaces: the launchers and their inits,
// nothing else (nothing can enter them but by their fork).
func waitingNamespaces(t *testing.T, launchers []int) (inits, members []int) {
	t.Helper()
	var namespaces []string
	for _, pid := range launchers {
		inits = append(inits, initOf(t, pid))
		namespaces = append(namespaces, nsOf(t, pid)...)
	}
	members = inNamespaces(namespaces)
	want := append(slices.Clone(launchers), inits...)
	slices.Sort(want)
	if slices.Sort(members); !slices.Equal(members, want) {
		t.Fatalf("the processes in the waiting launchers' namespaces are %v, want the launchers and their inits %v", members, want)
	}
	return inits, members
}

// endedAll waits until none of pids runs: the namespaces they alone were
// in are then gone. (Their numbers are not watched: the kernel gives a
// freed namespace's to the next one.)
func endedAll(t *testing.T, what string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		testwait.For(t, fmt.Sprintf("%s: process %d to end", what, pid), func() bool { return !running(pid) })
	}
}

// TestWaitingLaunchersMadeTheNamespaces: a waiting launcher has the call's
// namespaces made before its launch — its init runs in its tree, mounted
// its /proc and holds none of the launcher's fds — and a pooled command
// runs in them, as PID 2 under that init.
func TestWaitingLaunchersMadeTheNamespaces(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespacesOn(t)
	waiting := e.prime(t)
	inits, _ := waitingNamespaces(t, waiting)
	namespaces := nsOf(t, waiting[0])
	for i, pid := range inits {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:])); f[1] != strconv.Itoa(waiting[i]) {
			t.Errorf("init %d: parent %s, want launcher %d", pid, f[1], waiting[i])
		}
		if os.Geteuid() == 0 { // an init is not dumpable: only root sees its fds
			// Once it is set up (it closes what the fork gave it after
			// /proc): its two pipes (and its signalfd, closed on exec).
			own := func(n int, target string) bool { return n < 2 && strings.HasPrefix(target, "pipe:") }
			settled := func() bool {
				fds := openFds(t, pid)
				for n, target := range fds {
					if !own(n, target) {
						return false
					}
				}
				return len(fds) == 2
			}
			ctx, cancel := context.WithTimeout(t.Context(), testwait.Limit)
			testwait.Poll(ctx, settled)
			cancel()
			for n, target := range openFds(t, pid) {
				if !own(n, target) {
					t.Errorf("init %d holds fd %d: %s", pid, n, target)
				}
			}
		}
	}
	out, stderr, code := e.sh(t, Default, `echo "pid=$$"; cat /proc/1/cmdline | tr '\0' ' '; echo; readlink /proc/self/ns/pid /proc/self/ns/mnt`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if pid := pidOf(t, out); pid != 2 || !strings.Contains(out, launchArg0) {
		t.Errorf("a pooled command is not PID 2 under the launcher's init:\n%s", out)
	}
	if !strings.Contains(out, namespaces[0]) || !strings.Contains(out, namespaces[1]) {
		t.Errorf("a pooled command is not in the namespaces the first waiting launcher made %v:\n%s", namespaces[:2], out)
	}
}

// TestWaitingInitsEndWithTheirLaunchers: the init and namespaces a waiting
// launcher made end with it — when the pool empties after its idle time,
// when the pool changes what its launchers are, and when a launcher is
// killed — and nothing is left in them.
func TestWaitingInitsEndWithTheirLaunchers(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespacesOn(t)
	p := e.sb.launchers

	_, members := waitingNamespaces(t, e.prime(t))
	p.mu.Lock()
	p.lastUse = time.Now().Add(-poolIdle)
	p.mu.Unlock()
	p.drainIfIdle()
	endedAll(t, "the pool idle", members)

	_, members = waitingNamespaces(t, e.prime(t))
	if p.take(e.trees, launcherKind{}) != nil {
		t.Fatal("a launcher with namespaces was taken for a call without")
	}
	endedAll(t, "the pool changed its kind", members)

	p.mu.Lock()
	p.kind = launcherKind{ns: true, userNS: e.sb.caps.UserNS}
	p.mu.Unlock()
	waiting := e.prime(t)
	_, members = waitingNamespaces(t, waiting[:1])
	p.mu.Lock()
	w := p.ready[0]
	p.ready = p.ready[1:]
	p.mu.Unlock()
	// Killed alone, as the OOM killer would: its init ends by itself.
	if err := w.proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	endedAll(t, "a launcher killed", members)
	w.conn.Close()
	w.tree.Release()
}

// TestWaitingInitsDieWithTheDaemon: when the daemon is killed, the inits
// and namespaces its waiting launchers made end with them.
func TestWaitingInitsDieWithTheDaemon(t *testing.T) {
	t.Parallel()
	newConfinedEnv(t, nil).needNamespacesOn(t) // skips where nothing can be confined
	cmd, pids := startPoolDaemon(t)
	_, members := waitingNamespaces(t, pids)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	endedAll(t, "the daemon killed", members)
}

// poolUserTests run again as an ordinary user by TestPoolAsOrdinaryUser.
const poolUserTests = "^(TestPooledLaunchGivesTheSameProcess|TestPooledLaunchPlacesFds|TestWaitingLauncherHoldsNothing|" +
	"TestWaitingLaunchersDieWithTheDaemon|TestPooledAttacksAreRefused|TestPooledLaunchReportsExecErrors|" +
	"TestWaitingLaunchersMadeTheNamespaces|TestWaitingInitsEndWithTheirLaunchers|TestWaitingInitsDieWithTheDaemon|TestWaitingLauncherDropsStrayFds|" +
	"TestLauncherStartMakesNoNamespace)$"

// TestPoolAsOrdinaryUser runs the pool's tests again in a copy of this
// test binary started as nobody (uid 65534), whose launchers wait in user
// namespaces of their own.
func TestPoolAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	tests := poolUserTests
	if raceBuild {
		// Its "limited" profile's 256 MiB is an rlimit for a user: the race
		// runtime of a launcher started from this binary needs more.
		t.Log("TestPooledLaunchGivesTheSameProcess is left out: a race-detector launcher needs more memory than its limited profile's rlimit leaves a user")
		tests = strings.Replace(tests, "TestPooledLaunchGivesTheSameProcess|", "", 1)
	}
	testuser.Rerun(t, tests)
}

// TestWaitingLauncherDropsStrayFds: a waiting launcher started with a file
// it was not meant to get (another start's, open without close-on-exec
// while it was forked) closes it before it waits: here the write end of a
// pipe, whose reader sees the end of file only once no process holds it.
func TestWaitingLauncherDropsStrayFds(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	r, stray, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "launcher"), os.NewFile(uintptr(fds[1]), "launcher")
	defer ours.Close()
	kind := launcherKind{ns: e.sb.caps.PidNS, userNS: e.sb.caps.UserNS}
	proc, tree, err := e.trees.StartProcess("/proc/self/exe", []string{launchArg0, poolArg, "3", launcherArg(kind.ns)},
		&os.ProcAttr{Files: []*os.File{nil, nil, nil, theirs, stray}, Sys: launcherSys(kind.ns, kind.userNS)})
	theirs.Close()
	stray.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ours.Close(); _, _ = proc.Wait(); tree.Release() }()
	// Waiting: it said so on its socket.
	w := &waitingLauncher{proc: proc, tree: tree, conn: ours}
	if err := w.ready(readyWithin); err != nil {
		t.Fatal(err)
	}
	if err := r.SetReadDeadline(time.Now().Add(testwait.Limit)); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("the stray pipe's reader got %d bytes, %v: the waiting launcher still holds its write end", n, err)
	}
}
