package proctree

import (
	"context"
	"os"
	"testing"
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
