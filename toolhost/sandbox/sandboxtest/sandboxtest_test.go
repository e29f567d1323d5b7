package sandboxtest

import (
	"fmt"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// skips records the first skip of a check instead of ending the test.
type skips struct {
	testing.TB
	why string
}

func (s *skips) Helper() {}

func (s *skips) Skipf(format string, args ...any) {
	if s.why == "" {
		s.why = fmt.Sprintf(format, args...)
	}
}

// Each check skips, with the machine's reason, exactly where what it needs
// is missing.
func TestChecksSkipSayingWhy(t *testing.T) {
	landlock := sandbox.Capabilities{Mechanism: "landlock", LandlockABI: 6, Files: true, Network: true, Memory: "cgroup v2"}
	for _, c := range []struct {
		name  string
		check func(testing.TB, sandbox.Capabilities)
		caps  sandbox.Capabilities
		want  string
	}{
		{"files", NeedFiles, landlock, ""},
		{"no files", NeedFiles, sandbox.Capabilities{Mechanism: "none", Why: "not in the lsm= list"},
			"Landlock is not available here: not in the lsm= list"},
		{"network", NeedNetwork, landlock, ""},
		{"no network", NeedNetwork, sandbox.Capabilities{Mechanism: "landlock", LandlockABI: 3, Files: true, Why: "ABI 3"},
			"Landlock here has no TCP rules (ABI 3): ABI 3"},
		{"network without files", NeedNetwork, sandbox.Capabilities{Why: "none at all"}, "Landlock is not available here: none at all"},
		{"tree memory", NeedTreeMemoryLimit, landlock, ""},
		{"memory by rlimit", NeedTreeMemoryLimit, sandbox.Capabilities{Memory: "rlimit"},
			`no cgroup memory limit here ("rlimit"): the kernel's OOM kill of a tree needs one`},
	} {
		s := &skips{TB: t}
		c.check(s, c.caps)
		if s.why != c.want {
			t.Errorf("%s: skipped with %q, want %q", c.name, s.why, c.want)
		}
	}
}
