package sandbox

import (
	"fmt"
	"os"
	"testing"
)

// TestLauncherStartMakesNoNamespace: the daemon's start of a launcher
// makes none of the call's namespaces (its clone would copy the mount
// table, on the daemon's CPU): a waiting launcher's main thread is still
// in the daemon's mount and IPC namespaces, and the namespaces its
// commands get are those its own thread made, where its init is.
func TestLauncherStartMakesNoNamespace(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespacesOn(t)
	ns := func(pid int, kind string) string {
		t.Helper()
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
		if err != nil {
			t.Fatal(err)
		}
		return link
	}
	self := os.Getpid()
	for _, launcher := range e.prime(t) {
		init := initOf(t, launcher)
		for _, kind := range []string{"mnt", "ipc"} {
			if got, daemon := ns(launcher, kind), ns(self, kind); got != daemon {
				t.Errorf("waiting launcher %d: its main thread's %s namespace is %s, want the daemon's %s", launcher, kind, got, daemon)
			}
			if got := ns(init, kind); got == ns(self, kind) {
				t.Errorf("waiting launcher %d: its init is in the daemon's %s namespace %s", launcher, kind, got)
			}
		}
	}
}
