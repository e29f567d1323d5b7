package proctree

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestStaleCleanupSparesOtherPIDNamespaces: a daemon that starts in a PID
// namespace of its own (a container's PID 1 sharing the machine's cgroup
// tree) sees no process with this daemon's pid; its start-up removal of
// the cgroups of daemons that are gone leaves this daemon's trees running.
func TestStaleCleanupSparesOtherPIDNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a PID namespace of its own needs root here")
	}
	m := testManager(t, ModeCgroup)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1) to run in a tree")
	}
	cmd, tree, err := m.StartCmd(func() *exec.Cmd { return exec.Command(sleep, "600") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tree.KillAndWait(5e9)
		_ = cmd.Wait()
		tree.Release()
	})

	other := exec.Command("/proc/self/exe", "-test.run=^$")
	other.Env = append(os.Environ(), fakeRoleEnv+"=daemon")
	other.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if out, err := other.CombinedOutput(); err != nil {
		t.Fatalf("a daemon in a PID namespace of its own: %v\n%s", err, out)
	}
	if pi, ok := stat(cmd.Process.Pid); !tree.Alive() || !ok || pi.ended() {
		t.Fatalf("this daemon's tree was killed by the start of a daemon in another PID namespace (alive %v)", tree.Alive())
	}
	if _, err := os.Stat(tree.CgroupDir()); err != nil {
		t.Fatalf("this daemon's tree's cgroup was removed: %v", err)
	}
}
