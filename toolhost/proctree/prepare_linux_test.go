package proctree

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareRunsBeforeTheLeader: prepare sees the tree's cgroup before
// the leader runs there (the leader finds what prepare wrote); an error
// from prepare starts nothing and releases the tree. BeforeRelease reads
// the cgroup while it still exists.
func TestPrepareRunsBeforeTheLeader(t *testing.T) {
	m := testManager(t, ModeCgroup)
	marker := filepath.Join(t.TempDir(), "ran")
	refused := errors.New("refused")
	var dir string
	_, _, err := m.StartCmdWith(func(tr *Tree) error {
		dir = tr.CgroupDir()
		return refused
	}, func() *exec.Cmd { return exec.Command("/bin/sh", "-c", "echo > "+marker) })
	if !errors.Is(err, refused) {
		t.Fatalf("StartCmdWith: %v, want prepare's error", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the leader ran though prepare refused")
	}
	if _, err := os.Stat(dir); dir == "" || err == nil {
		t.Errorf("the refused tree's cgroup %q is still there (%v)", dir, err)
	}

	// What prepare does is in force when the leader starts: here, a file
	// prepare writes and the leader reads (a cgroup's limits, in the sandbox).
	note := filepath.Join(t.TempDir(), "note")
	var out strings.Builder
	cmd, tree, err := m.StartCmdWith(func(tr *Tree) error {
		return os.WriteFile(note, []byte(tr.CgroupDir()), 0o600)
	}, func() *exec.Cmd {
		c := exec.Command("/bin/cat", note)
		c.Stdout = &out
		return c
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if out.String() != tree.CgroupDir() || out.String() == "" {
		t.Errorf("the leader found %q, want its cgroup %q written before it started", out.String(), tree.CgroupDir())
	}
	var seen bool
	tree.BeforeRelease(func() {
		_, err := os.Stat(filepath.Join(tree.CgroupDir(), "cgroup.procs"))
		seen = err == nil
	})
	tree.Release()
	if !seen {
		t.Error("BeforeRelease ran after the cgroup was gone")
	}
	ran := false
	tree.BeforeRelease(func() { ran = true })
	if !ran {
		t.Error("BeforeRelease on a released tree did not run at once")
	}
}

// TestManagersMadeAtOnce: Managers made at the same time each get their
// cgroups (a probe cgroup shared by name made one remove the other's, and
// New then found neither cgroup.kill nor cgroup.freeze).
func TestManagersMadeAtOnce(t *testing.T) {
	testManager(t, ModeCgroup) // skips where there is no writable cgroup v2
	errs := make(chan error, 400)
	for range 8 {
		go func() {
			for range 50 {
				m, err := New(Options{Mode: ModeCgroup})
				if err == nil {
					m.Close()
				}
				errs <- err
			}
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
