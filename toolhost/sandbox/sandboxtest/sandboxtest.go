// Package sandboxtest is what the tests of sandboxed commands share: each
// skips a test, saying why, where this machine cannot enforce what the test
// needs. Tests only: it imports testing.
package sandboxtest

import (
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// NeedLandlock skips t where the kernel cannot confine files (Landlock), as
// a sandbox made now would find.
func NeedLandlock(t testing.TB) {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	NeedFiles(t, sb.Capabilities())
}

// NeedFiles skips t where c confines no file access.
func NeedFiles(t testing.TB, c sandbox.Capabilities) {
	t.Helper()
	if !c.Files {
		t.Skipf("Landlock is not available here: %s", c.Why)
	}
}

// NeedNetwork skips t where c confines no file access or has no TCP rules
// (Landlock ABI 4).
func NeedNetwork(t testing.TB, c sandbox.Capabilities) {
	t.Helper()
	NeedFiles(t, c)
	if !c.Network {
		t.Skipf("Landlock here has no TCP rules (ABI %d): %s", c.LandlockABI, c.Why)
	}
}

// NeedTreeMemoryLimit skips t where c limits no process tree's memory as a
// whole (a cgroup): the kernel's OOM kill of a tree needs one.
func NeedTreeMemoryLimit(t testing.TB, c sandbox.Capabilities) {
	t.Helper()
	if c.Memory == "" || c.Memory == "rlimit" {
		t.Skipf("no cgroup memory limit here (%q): the kernel's OOM kill of a tree needs one", c.Memory)
	}
}
