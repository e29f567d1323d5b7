package proctree

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestReleaseReapsOnlyTheTreesZombies: in ModeCgroup the daemon is a
// subreaper, so a tree's orphans that end become its zombies. Release
// reaps them — the fake's child and grandchild, adopted once the leader is
// killed — and nothing else: an exec.Cmd child of the daemon that ended
// meanwhile, not yet waited, keeps its exit status for its own Wait.
func TestReleaseReapsOnlyTheTreesZombies(t *testing.T) {
	m := testManager(t, ModeCgroup)
	if !isSubreaper() {
		t.Skip("the daemon could not become a child subreaper: its trees' orphans go to init")
	}
	tree, dir, proc := startFakeTree(t, m)
	leaderDone := make(chan struct{})
	go func() { _, _ = proc.Wait(); close(leaderDone) }()
	pids := map[string]int{}
	for _, r := range []string{"leader", "child", "grandchild"} {
		pids[r] = readPid(t, dir, r)
	}
	foreign := exec.Command("/bin/sh", "-c", "exit 3")
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the foreign child to end, unreaped", func() bool {
		pi, ok := stat(foreign.Process.Pid)
		return ok && pi.ended()
	})

	tree.KillAll()
	<-leaderDone
	testwait.For(t, "the tree to empty", func() bool { return !tree.Alive() })
	for _, r := range []string{"child", "grandchild"} {
		testwait.For(t, "the "+r+" to be a zombie of ours", func() bool {
			pi, ok := stat(pids[r])
			return ok && pi.ended() && pi.ppid == os.Getpid()
		})
	}
	tree.Release()
	for _, r := range []string{"child", "grandchild"} {
		if pi, ok := stat(pids[r]); ok {
			t.Errorf("the %s %d is left a zombie after Release: %+v", r, pids[r], pi)
		}
	}
	var exit *exec.ExitError
	if err := foreign.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the foreign child %s: Wait got %v, want exit status 3", strconv.Itoa(foreign.Process.Pid), err)
	}
}
