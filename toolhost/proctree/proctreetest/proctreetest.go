// Package proctreetest holds what the tests of proctree's users share, as
// httptest does for net/http: a Manager in a given mode, a check that a
// process has really ended, and the escapee, the grandchild that tries to
// outlive the process tree it was started in. proctree's own tests keep
// their own fakes, so that a fault here cannot hide one there.
package proctreetest

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// Manager returns a Manager in mode, closed when the test ends. A mode
// the system cannot give (ModeCgroup needs a writable cgroup v2) skips
// the test with the reason.
func Manager(t testing.TB, mode proctree.Mode) *proctree.Manager {
	t.Helper()
	m, err := proctree.New(proctree.Options{Mode: mode, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Skipf("process tree mode %s unavailable here: %v", mode, err)
	}
	t.Cleanup(m.Close)
	return m
}
