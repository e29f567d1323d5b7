package proctree

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/vmtest"
)

// TestLeafInVM runs TestGuestDaemonMovesIntoALeaf in a virtual machine
// (internal/vmtest) whose cgroup v2 offers memory, pids and cpu: the leaf
// move is proven there with the controllers the sandbox's limits need.
// The tracking tests run there too, where cgroup2 is mounted with
// nsdelegate and each tree is fenced in a cgroup namespace of its own.
func TestLeafInVM(t *testing.T) {
	t.Parallel()
	vmtest.Run(t, vmtest.Options{Run: "^(TestGuestDaemonMovesIntoALeaf|TestOwns|TestOwnsWhatLeftItsCgroup|TestKillFindsASetsidGrandchild)$"})
}

// TestGuestDaemonMovesIntoALeaf is TestDaemonMovesIntoALeaf and its run as
// an ordinary user on a cgroup v2 that offers memory, pids and cpu: a
// daemon started (with a wrapper) into a cgroup of the guest's system.slice
// delegated to it, as systemd's Delegate=yes makes one, moves into its
// leaf vcpnode.daemon and enables the three for the trees' cgroups.
func TestGuestDaemonMovesIntoALeaf(t *testing.T) {
	vmtest.NeedGuest(t, "TestLeafInVM")
	for _, prefix := range []string{"leaftest-", leafUserPrefix} {
		dir := leafTestCgroup(t, vmtest.Slice, prefix)
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		for _, c := range leafControllers {
			if !slices.Contains(strings.Fields(string(b)), c) {
				t.Fatalf("%s not offered to %s (%q)", c, dir, b)
			}
		}
		if prefix == leafUserPrefix {
			testuser.RerunIn(t, "^TestDaemonMovesIntoALeafAsUser$", []string{dir})
			continue
		}
		wrapper := exec.Command("sleep", "600")
		startIn(t, wrapper, dir)
		t.Cleanup(func() { _ = wrapper.Process.Kill(); _ = wrapper.Wait() })
		daemonInLeaf(t, dir, wrapper.Process.Pid, "")
	}
}
