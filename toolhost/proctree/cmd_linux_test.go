package proctree

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// StartCmd gives an exec.Cmd the same tree as StartProcess: a setsid
// grandchild that ignores SIGTERM is found and killed.
func TestStartCmdTracksTheWholeTree(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeCgroup, ModeSubreaper} {
		t.Run(mode.String(), func(t *testing.T) {
			m := testManager(t, mode)
			dir := t.TempDir()
			cmd, tree, err := m.StartCmd(func() *exec.Cmd {
				c := exec.Command(self)
				c.Env = fakeEnv("leader", dir)
				return c
			})
			if err != nil {
				t.Fatal(err)
			}
			waited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(waited) }()
			leader, child, grandchild := readPid(t, dir, "leader"), readPid(t, dir, "child"), readPid(t, dir, "grandchild")
			if leader != cmd.Process.Pid || tree.Leader() != leader {
				t.Fatalf("leader %d, cmd pid %d, tree leader %d", leader, cmd.Process.Pid, tree.Leader())
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := tree.Kill(ctx, 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			<-waited
			for _, pid := range []int{leader, child, grandchild} {
				testwait.For(t, "process "+strconv.Itoa(pid)+" to be gone", func() bool { return gone(pid) })
			}
			tree.Release()
		})
	}
}

// A nil Env is the daemon's environment, plus the marker.
func TestStartCmdMarksTheEnvironment(t *testing.T) {
	m := testManager(t, ModeSubreaper)
	t.Setenv("PROCTREE_TEST_INHERITED", "yes")
	var out bytes.Buffer
	cmd, tree, err := m.StartCmd(func() *exec.Cmd {
		c := exec.Command("/bin/sh", "-c", `printf '%s %s' "$PROCTREE_TEST_INHERITED" "$`+EnvMarker+`"`)
		c.Stdout = &out
		return c
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	tree.Release()
	if want := "yes " + strings.TrimPrefix(tree.Env(), EnvMarker+"="); out.String() != want {
		t.Fatalf("the command saw %q, want %q", out.String(), want)
	}
}

// A command that cannot start for its own reasons (a missing working
// directory) does not move the Manager off cgroups.
func TestStartCmdFailureKeepsTheCgroupMode(t *testing.T) {
	m := testManager(t, ModeCgroup)
	_, _, err := m.StartCmd(func() *exec.Cmd {
		c := exec.Command("/bin/true")
		c.Dir = filepath.Join(t.TempDir(), "missing")
		return c
	})
	if err == nil {
		t.Fatal("a command in a missing directory started")
	}
	if m.Mode() != ModeCgroup {
		t.Fatalf("mode %s after a failed start, want cgroup", m.Mode())
	}
}

// The same for StartProcess: a plugin whose program is missing (or whose
// folder is gone) used to move every later run off cgroups for good.
func TestStartProcessFailureKeepsTheCgroupMode(t *testing.T) {
	m := testManager(t, ModeCgroup)
	missing := filepath.Join(t.TempDir(), "missing")
	if _, _, err := m.StartProcess(missing, []string{missing}, &os.ProcAttr{}); err == nil {
		t.Fatal("a missing program started")
	}
	if _, _, err := m.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{Dir: missing}); err == nil {
		t.Fatal("a program in a missing directory started")
	}
	if m.Mode() != ModeCgroup {
		t.Fatalf("mode %s after failed starts, want cgroup", m.Mode())
	}
}
