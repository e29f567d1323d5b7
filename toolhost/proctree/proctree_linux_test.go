package proctree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

func testManager(t *testing.T, mode Mode) *Manager {
	t.Helper()
	m, err := New(Options{Mode: mode, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if errors.Is(err, os.ErrPermission) || (err != nil && mode == ModeCgroup) {
		t.Skipf("no writable cgroup v2 here (%v); ModeSubreaper covers this system", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// stat reads a process's state, parent and session from /proc.
func stat(pid int) (pi procInfo, ok bool) {
	return readStat(pid, make([]byte, 0, 512))
}

// gone: no such process, or one that has ended and that another parent
// has yet to reap. A zombie of this test process would be one we failed to
// reap.
func gone(pid int) bool {
	pi, ok := stat(pid)
	return !ok || (pi.ended() && pi.ppid != os.Getpid())
}

// TestKillFindsASetsidGrandchild: the grandchild left its session and
// process group, was orphaned and ignores SIGTERM; Kill still ends it, in
// every Linux mode that can see it.
func TestKillFindsASetsidGrandchild(t *testing.T) {
	for _, mode := range []Mode{ModeCgroup, ModeSubreaper} {
		t.Run(mode.String(), func(t *testing.T) {
			m := testManager(t, mode)
			tree, dir, proc := startFakeTree(t, m)
			if tree.Mode() != mode {
				t.Fatalf("tree mode %s, want %s", tree.Mode(), mode)
			}
			reaped := make(chan struct{})
			go func() { _, _ = proc.Wait(); close(reaped) }()
			leader := readPid(t, dir, "leader")
			grandchild := readPid(t, dir, "grandchild")
			child := readPid(t, dir, "child")
			gi, ok := stat(grandchild)
			if !ok || gi.sid != grandchild || gi.pgid != grandchild {
				t.Fatalf("grandchild %d should lead its own session: %+v", grandchild, gi)
			}
			if leader != proc.Pid {
				t.Fatalf("leader pid %d, started %d", leader, proc.Pid)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := tree.Kill(ctx, 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			<-reaped
			for _, pid := range []int{leader, child, grandchild} {
				testwait.For(t, "process "+strconv.Itoa(pid)+" to be gone and reaped", func() bool { return gone(pid) })
			}
			if tree.Alive() {
				t.Fatal("tree still alive after Kill")
			}
			tree.Release()
		})
	}
}

// TestKillFindsProcessesWhoseMainThreadExited: a process whose main
// thread called exit (pthread_exit in C) is shown as a zombie while its
// other threads run, fork and hold resources. It still belongs to the
// tree: Kill ends it and it is reaped, whether it is the leader or an
// orphaned grandchild (whose marker is then read from a live thread).
func TestKillFindsProcessesWhoseMainThreadExited(t *testing.T) {
	for _, mode := range []Mode{ModeCgroup, ModeSubreaper} {
		for _, role := range []string{"leader", "grandchild"} {
			t.Run(mode.String()+"/"+role, func(t *testing.T) {
				m := testManager(t, mode)
				tree, dir, proc := startFakeTree(t, m, fakeExitMainEnv+"="+role)
				reaped := make(chan struct{})
				go func() { _, _ = proc.Wait(); close(reaped) }()
				pids := map[string]int{}
				for _, r := range []string{"leader", "child", "grandchild"} {
					pids[r] = readPid(t, dir, r)
				}
				testwait.For(t, "the child to exit, orphaning the grandchild", func() bool { return gone(pids["child"]) })
				testwait.For(t, "the main thread of the "+role+" to exit", func() bool {
					pi, ok := stat(pids[role])
					return ok && pi.mainThreadGone()
				})
				if !tree.Alive() {
					t.Fatalf("tree not alive while the %s runs in its other threads", role)
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				if err := tree.Kill(ctx, 100*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				select {
				case <-reaped:
				case <-time.After(waitLimit):
					t.Fatalf("the leader %d was not killed", pids["leader"])
				}
				for r, pid := range pids {
					testwait.For(t, r+" "+strconv.Itoa(pid)+" to be gone and reaped", func() bool { return gone(pid) })
				}
				if tree.Alive() {
					t.Fatal("tree still alive after Kill")
				}
				tree.Release()
			})
		}
	}
}

// TestCgroupKillWithoutCgroupKillFile: the freeze path for kernels before 5.14.
func TestCgroupKillWithoutCgroupKillFile(t *testing.T) {
	m := testManager(t, ModeCgroup)
	tree, dir, proc := startFakeTree(t, m)
	tree.b.(*cgroupBackend).noKill = true
	go func() { _, _ = proc.Wait() }()
	grandchild := readPid(t, dir, "grandchild")
	tree.KillAll()
	testwait.For(t, "the cgroup to empty", func() bool { return !tree.Alive() })
	dirName := tree.b.(*cgroupBackend).dir
	tree.Release() // reaps the grandchild if an earlier test made us a subreaper
	testwait.For(t, "the grandchild to end", func() bool { return gone(grandchild) })
	// The emptied cgroup is removed (cgroups are not reused, see cgroupPoolSize).
	if _, err := os.Stat(dirName); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cgroup %s not removed by Release: %v", dirName, err)
	}
	next, err := m.NewTree()
	if err != nil {
		t.Fatal(err)
	}
	if got := next.b.(*cgroupBackend).dir; got == dirName || next.Alive() {
		t.Fatalf("next tree got cgroup %s (alive %v), want a new one", got, next.Alive())
	}
	next.Release()
	m.Close()
}

// TestProcessGroupModeMissesASetsidGrandchild documents why the other modes
// exist (and what macOS is left with): the process group alone does not
// reach a grandchild that called setsid.
func TestProcessGroupModeMissesASetsidGrandchild(t *testing.T) {
	m := testManager(t, ModeProcessGroup)
	tree, dir, proc := startFakeTree(t, m)
	go func() { _, _ = proc.Wait() }()
	grandchild := readPid(t, dir, "grandchild")
	defer func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) }()
	child := readPid(t, dir, "child")
	defer func() {
		// Zombies the group left to us (this process may be a subreaper
		// after the other tests): reap them, errors ignored.
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(child, &ws, syscall.WNOHANG, nil)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	// The error is not checked: an unreaped zombie keeps a group non-empty.
	_ = tree.Kill(ctx, 50*time.Millisecond)
	if gone(grandchild) {
		t.Fatal("the process group reached the setsid grandchild; ModeProcessGroup's documented limit is wrong")
	}
}

// TestSubreaperLeavesOtherChildrenAlone: while a tree runs in
// ModeSubreaper, exec.Cmd children of the same process still get their own
// exit status, and an orphan of one of them (adopted by us, but carrying no
// tree marker) is neither killed with the tree nor reaped behind our back.
func TestSubreaperLeavesOtherChildrenAlone(t *testing.T) {
	m := testManager(t, ModeSubreaper)
	tree, dir, proc := startFakeTree(t, m)
	go func() { _, _ = proc.Wait() }()
	readPid(t, dir, "grandchild")

	out, err := exec.Command("/bin/sh", "-c", "sleep 600 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(foreign, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(foreign, &ws, 0, nil) // it is our child now (subreaper)
	}()
	testwait.For(t, "the foreign orphan to be adopted", func() bool {
		pi, ok := stat(foreign)
		return ok && pi.ppid == os.Getpid()
	})
	for i := 0; i < 20; i++ {
		err := exec.Command("/bin/sh", "-c", "exit 3").Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Fatalf("run %d: exec.Cmd.Wait got %v, want exit status 3", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := tree.Kill(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	tree.Release()
	if pi, ok := stat(foreign); !ok || pi.state == 'Z' {
		t.Fatalf("the foreign orphan %d was killed or reaped with the tree: %+v", foreign, pi)
	}
}

// TestKillFitsTheDeadline: a grace longer than ctx's deadline is cut so
// SIGKILL still goes out in time.
func TestKillFitsTheDeadline(t *testing.T) {
	m := testManager(t, ModeAuto)
	tree, dir, proc := startFakeTree(t, m)
	go func() { _, _ = proc.Wait() }()
	grandchild := readPid(t, dir, "grandchild")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tree.Kill(ctx, time.Hour) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Kill waited for its grace past ctx's deadline")
	}
	testwait.For(t, "the grandchild to end", func() bool { return gone(grandchild) })
	tree.Release()
}

func TestOwnCgroupDirParsesMountinfo(t *testing.T) {
	if got := unescapeMount(`/sys/fs/cgroup\040x`); got != "/sys/fs/cgroup x" {
		t.Fatalf("unescape: %q", got)
	}
	dir, _, _, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	if _, err := os.Stat(dir + "/cgroup.procs"); err != nil {
		t.Fatalf("own cgroup %s: %v", dir, err)
	}
}
