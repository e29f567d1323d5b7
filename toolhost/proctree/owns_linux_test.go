package proctree

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestOwns: every process of a tree, the setsid grandchild included, is
// the Manager's; the test process, its parent and init are not.
func TestOwns(t *testing.T) {
	for _, mode := range []Mode{ModeCgroup, ModeSubreaper} {
		t.Run(mode.String(), func(t *testing.T) {
			m := testManager(t, mode)
			tree, dir, proc := startFakeTree(t, m)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				_ = tree.Kill(ctx, 0)
				_, _ = proc.Wait()
				tree.Release()
			}()
			for _, role := range []string{"leader", "child", "grandchild"} {
				if pid := readPid(t, dir, role); !m.Owns(pid) {
					t.Errorf("the %s (pid %d) is not the Manager's", role, pid)
				}
			}
			for _, pid := range []int{os.Getpid(), os.Getppid(), 1} {
				if m.Owns(pid) {
					t.Errorf("pid %d is not a tree's, yet Owns says it is", pid)
				}
			}
		})
	}
}

// TestOwnsWhatLeftItsCgroup: a grandchild started in the daemon's own
// cgroup (clone3's CLONE_INTO_CGROUP, as a process without a syscall
// filter can), with an empty environment, in a session of its own and
// orphaned, is still the Manager's: it descends from the daemon, a
// subreaper. Where cgroup2 is mounted with nsdelegate (systemd mounts it
// so), the tree's cgroup namespace fence makes the kernel refuse that
// start instead.
func TestOwnsWhatLeftItsCgroup(t *testing.T) {
	m := testManager(t, ModeCgroup)
	cg := m.plat.(*cgroupPlatform)
	tree, dir, proc := startFakeTree(t, m, fakeEscapeEnv+"="+cg.dir)
	if cg.fence {
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			_ = tree.Kill(ctx, 0)
			_, _ = proc.Wait()
			tree.Release()
		}()
		var refused []byte
		testwait.For(t, "the child's start of a grandchild outside its cgroup namespace to fail", func() bool {
			refused, _ = os.ReadFile(filepath.Join(dir, "child.err"))
			return refused != nil
		})
		// The binary is the one the child runs: ENOENT is the kernel's
		// answer to a clone into a cgroup outside the namespace.
		if !strings.Contains(string(refused), "no such file or directory") {
			t.Errorf("the start outside the fence failed with %q, want the kernel's ENOENT", refused)
		}
		t.Logf("the fence refused: %s", refused)
		return
	}
	gc := readPid(t, dir, "grandchild")
	defer func() {
		_ = syscall.Kill(gc, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(gc, &ws, 0, nil) // our zombie once adopted
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = tree.Kill(ctx, 0)
		_, _ = proc.Wait()
		tree.Release()
	}()
	readPid(t, dir, "child") // written once the grandchild runs: it is an orphan from here on
	cgroup, _ := os.ReadFile("/proc/" + strconv.Itoa(gc) + "/cgroup")
	environ, _ := os.ReadFile("/proc/" + strconv.Itoa(gc) + "/environ")
	if strings.Contains(string(cgroup), tree.CgroupDir()[len(cg.dir):]) || strings.Contains(string(environ), EnvMarker) {
		t.Fatalf("the grandchild did not leave: cgroup %q, environment %q", cgroup, environ)
	}
	if !m.Owns(gc) {
		t.Errorf("the grandchild (pid %d) left the tree's cgroup and environment and is no longer known as a tool's", gc)
	}
}

// TestOwnsAsAUser: the same, for a daemon run by an ordinary user.
func TestOwnsAsAUser(t *testing.T) {
	testuser.Rerun(t, "^TestOwns$")
}
