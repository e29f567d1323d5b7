//go:build unix

package proctree

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// The test binary re-executes itself as a misbehaving plugin when
// FakeRoleEnv is set: the leader ignores SIGTERM and starts a child that
// starts a grandchild and exits; the grandchild calls setsid (a session and
// process group of its own), ignores SIGTERM and, orphaned, sleeps. Each
// writes its pid to <FakeDirEnv>/<role>.pid. The role named by
// fakeExitMainEnv then ends its main thread alone (Linux), so the kernel
// shows it as a zombie while its other threads run on.
const (
	fakeRoleEnv     = "PROCTREE_TEST_ROLE"
	fakeDirEnv      = "PROCTREE_TEST_DIR"
	fakeExitMainEnv = "PROCTREE_TEST_EXIT_MAIN_THREAD"
	// fakeEscapeEnv names a cgroup directory the child starts the
	// grandchild in (clone3's CLONE_INTO_CGROUP), with an environment
	// holding nothing but its role: out of the tree's cgroup, unmarked.
	fakeEscapeEnv = "PROCTREE_TEST_ESCAPE_TO"
)

// exitMainThread, where the platform has it, ends the calling thread (the
// main one) and leaves the process running in its other threads.
var exitMainThread func()

// sleepAs sleeps as role, first ending the main thread if asked to.
func sleepAs(role string) {
	if os.Getenv(fakeExitMainEnv) == role && exitMainThread != nil {
		go func() { time.Sleep(10 * time.Minute); os.Exit(0) }()
		exitMainThread()
	}
	time.Sleep(10 * time.Minute)
}

func TestMain(m *testing.M) {
	if role := os.Getenv(fakeRoleEnv); role != "" {
		os.Exit(runFake(role, os.Getenv(fakeDirEnv)))
	}
	os.Exit(m.Run())
}

func runFake(role, dir string) int {
	signal.Ignore(syscall.SIGTERM)
	switch role {
	case "daemon":
		// A daemon's start in a PID namespace of its own (stale_linux_test.go).
		m, err := New(Options{Mode: ModeCgroup})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		m.Close()
		return 0
	case "leader":
		if err := startFake("child", dir, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "child":
		// Exit once the grandchild is ready (it closes the pipe), orphaning it.
		r, w, err := os.Pipe()
		if err == nil {
			err = startFake("grandchild", dir, w)
			w.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			// For a test whose grandchild start the kernel may refuse.
			tmp := filepath.Join(dir, "child.err.tmp")
			_ = os.WriteFile(tmp, []byte(err.Error()), 0o644)
			_ = os.Rename(tmp, filepath.Join(dir, "child.err"))
			return 1
		}
		_, _ = r.Read(make([]byte, 1))
		writePid(dir, role)
		return 0
	case "grandchild":
		if _, err := syscall.Setsid(); err != nil {
			fmt.Fprintln(os.Stderr, "setsid:", err)
			return 1
		}
		writePid(dir, role)
		_ = os.NewFile(3, "ready").Close()
		sleepAs(role)
		return 0
	default:
		return 2
	}
	writePid(dir, role)
	sleepAs(role)
	return 0
}

// startFake starts the test binary as role; ready, if set, becomes its fd 3.
func startFake(role, dir string, ready *os.File) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := fakeEnv(role, dir)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	files := []*os.File{null, null, null}
	if ready != nil {
		files = append(files, ready)
	}
	attr := &os.ProcAttr{Env: env, Files: files}
	if to := os.Getenv(fakeEscapeEnv); to != "" && role == "grandchild" {
		if attr.Sys, err = escapeAttr(to); err != nil {
			return err
		}
		attr.Env = []string{fakeRoleEnv + "=" + role, fakeDirEnv + "=" + dir}
	}
	_, err = os.StartProcess(self, []string{self}, attr)
	return err
}

// fakeEnv is our environment with the role and dir replaced (a duplicate
// key would leave the child the parent's role: getenv takes the first).
func fakeEnv(role, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, fakeRoleEnv+"=") && !strings.HasPrefix(kv, fakeDirEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, fakeRoleEnv+"="+role, fakeDirEnv+"="+dir)
}

func writePid(dir, role string) {
	tmp := filepath.Join(dir, role+".pid.tmp")
	_ = os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644)
	_ = os.Rename(tmp, filepath.Join(dir, role+".pid"))
}

// waitLimit bounds every wait; generous for -race on a loaded machine.
const waitLimit = 20 * time.Second

func readPid(t testing.TB, dir, role string) int {
	t.Helper()
	var pid int
	testwait.For(t, role+".pid", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, role+".pid"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

// startFakeTree starts the fake leader as a tree of m and returns the
// tree, the dir holding the pid files, and the leader's process.
func startFakeTree(t *testing.T, m *Manager, extraEnv ...string) (*Tree, string, *os.Process) {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := append(fakeEnv("leader", dir), extraEnv...)
	proc, tree, err := m.StartProcess(self, []string{self}, &os.ProcAttr{Env: env, Files: []*os.File{null, null, null}})
	if err != nil {
		t.Fatalf("StartProcess: %v", err)
	}
	return tree, dir, proc
}
