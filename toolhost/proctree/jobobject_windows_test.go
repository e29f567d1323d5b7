package proctree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/windows"
)

// The test binary re-executes itself as a plugin's processes when
// winRoleEnv is set: the leader starts a child, the child starts a
// grandchild and exits (orphaning it); the leader and the grandchild then
// wait forever. Each writes its pid to <winDirEnv>/<role>.pid once running.
const (
	winRoleEnv = "PROCTREE_TEST_ROLE"
	winDirEnv  = "PROCTREE_TEST_DIR"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(winRoleEnv); role != "" {
		os.Exit(runWinFake(role, os.Getenv(winDirEnv)))
	}
	os.Exit(m.Run())
}

func runWinFake(role, dir string) int {
	switch role {
	case "leader":
		if err := startWinFake("child", dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	case "child":
		// Wait until the grandchild runs, then leave it an orphan.
		if err := startWinFake("grandchild", dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		deadline := time.Now().Add(time.Minute)
		for readPid(dir, "grandchild") == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // a fake plugin polling a file, not test synchronisation
		}
		writeWinPid(dir, role)
		return 0
	case "grandchild":
	default:
		return 2
	}
	writeWinPid(dir, role)
	time.Sleep(10 * time.Minute)
	return 0
}

// startWinFake starts the test binary as role, outside of any proctree
// code: a plain child of the calling process.
func startWinFake(role, dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	p, err := os.StartProcess(self, []string{self, "-test.run=^$"}, &os.ProcAttr{
		Env:   append(os.Environ(), winRoleEnv+"="+role, winDirEnv+"="+dir),
		Files: []*os.File{null, os.Stderr, os.Stderr},
	})
	if err != nil {
		return err
	}
	return p.Release()
}

func writeWinPid(dir, role string) {
	tmp := filepath.Join(dir, role+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644); err == nil {
		_ = os.Rename(tmp, filepath.Join(dir, role+".pid"))
	}
}

func readPid(dir, role string) int {
	b, err := os.ReadFile(filepath.Join(dir, role+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(string(b))
	return pid
}

// startWinTree starts the leader through the Manager and returns it with
// handles to the three processes, once all three run.
func startWinTree(t *testing.T) (*Tree, *os.Process, map[string]windows.Handle) {
	t.Helper()
	m, err := New(Options{Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if m.Mode() != ModeJobObject {
		t.Fatalf("mode %s, want job-object", m.Mode())
	}
	dir := winTempDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	proc, tree, err := m.StartProcess(self, []string{self, "-test.run=^$"}, &os.ProcAttr{
		Env:   append(os.Environ(), winRoleEnv+"=leader", winDirEnv+"="+dir),
		Files: []*os.File{null, os.Stderr, os.Stderr},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tree.Release)
	handles := map[string]windows.Handle{}
	t.Cleanup(func() {
		for _, h := range handles {
			_ = windows.CloseHandle(h)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for _, role := range []string{"leader", "child", "grandchild"} {
		pid := readPid(dir, role)
		for pid == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // polling files the processes write, with a deadline
			pid = readPid(dir, role)
		}
		if pid == 0 {
			t.Fatalf("%s never wrote its pid", role)
		}
		if role == "child" {
			continue // it exits by itself
		}
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
		if err != nil {
			t.Fatalf("open %s (pid %d): %v", role, pid, err)
		}
		handles[role] = h
		if exited(h, 0) {
			t.Fatalf("%s (pid %d) already exited", role, pid)
		}
	}
	return tree, proc, handles
}

// winTempDir is t.TempDir, but removed file by file: under Wine 8 the
// RemoveAll of t.TempDir fails ("unlinkat …: Invalid function").
func winTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "proctree-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Error(err)
			}
		}
		if err := os.Remove(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// exited waits up to d for the process to end.
func exited(h windows.Handle, d time.Duration) bool {
	ev, err := windows.WaitForSingleObject(h, uint32(d/time.Millisecond))
	return err == nil && ev == windows.WAIT_OBJECT_0
}

func TestJobObjectKillsTheWholeTree(t *testing.T) {
	tree, proc, handles := startWinTree(t)
	if !tree.Alive() {
		t.Fatal("Alive false while the leader and the grandchild run")
	}
	if tree.Graceful() {
		t.Error("Graceful true on Windows, where SIGTERM does not exist")
	}
	// An hour of grace: Kill must not wait for a SIGTERM that cannot come.
	done := make(chan error, 1)
	go func() { done <- tree.Kill(context.Background(), time.Hour) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Kill did not return (waiting out the grace?)")
	}
	if tree.Alive() {
		t.Error("Alive true after Kill")
	}
	for role, h := range handles {
		if !exited(h, 30*time.Second) {
			t.Errorf("%s still running after Kill", role)
			continue
		}
		var code uint32
		if err := windows.GetExitCodeProcess(h, &code); err != nil || code != killedExitCode {
			t.Errorf("%s exit code %d (%v), want %d", role, code, err, killedExitCode)
		}
	}
	state, err := proc.Wait()
	if err != nil || state.ExitCode() != killedExitCode {
		t.Errorf("leader Wait: %v, %v", state, err)
	}
}

func TestReleaseKillsWhatIsLeft(t *testing.T) {
	tree, proc, handles := startWinTree(t)
	tree.Release() // closing the job kills its members
	for role, h := range handles {
		if !exited(h, 30*time.Second) {
			t.Errorf("%s still running after Release", role)
		}
	}
	_, _ = proc.Wait()
	if tree.Alive() {
		t.Error("a released tree says Alive")
	}
}

func TestSignalOnlyActsOnSIGKILL(t *testing.T) {
	tree, proc, handles := startWinTree(t)
	tree.Signal(syscall.SIGTERM)
	if exited(handles["leader"], 0) || !tree.Alive() {
		t.Fatal("SIGTERM ended the leader; the test's premise (no SIGTERM on Windows) is wrong")
	}
	tree.Signal(syscall.SIGKILL)
	for role, h := range handles {
		if !exited(h, 30*time.Second) {
			t.Errorf("%s still running after SIGKILL", role)
		}
	}
	_, _ = proc.Wait()
}

func TestForcedUnixModeIsRefused(t *testing.T) {
	for _, mode := range []Mode{ModeCgroup, ModeSubreaper, ModeProcessGroup} {
		if _, err := New(Options{Mode: mode}); err == nil {
			t.Errorf("mode %s accepted on Windows", mode)
		}
	}
	if _, err := New(Options{Mode: ModeJobObject}); err != nil {
		t.Errorf("mode job-object: %v", err)
	}
}
