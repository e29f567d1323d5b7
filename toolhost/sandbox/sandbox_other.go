//go:build !linux

package sandbox

import (
	"os"
	"runtime"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// policy: nothing is applied here.
type policy struct{}

// launcherPool: no launchers here.
type launcherPool struct{}

func (*launcherPool) refill()      {}
func (*launcherPool) waiting() int { return 0 }

// limiter: no limits here.
type limiter struct{}

type groups map[string]string

func (groups) events() events { return events{} }
func (groups) remove()        {}

func treeEvents(string, Profile) events { return events{} }

func (*Run) rlimitHits(error, [][]byte) []string { return nil }

// detect: profiles are not enforced outside Linux.
func detect(*proctree.Manager) (Capabilities, *limiter) {
	return Capabilities{Mechanism: "none", Why: "profiles are not enforced on " + runtime.GOOS +
		": commands run with the daemon's full rights"}, &limiter{}
}

// confine runs the command unchanged: nothing here can confine it. The
// Run keeps the profile's name, so errors and status say which profile
// was asked for; Capabilities says it is not enforced.
func (s *Sandbox) confine(*Options, Profile, Command, *Run) error { return nil }

func removeTemp(string) {}

func (r *Run) startProcess(trees *proctree.Manager, a *os.ProcAttr) (*os.Process, *proctree.Tree, error) {
	return trees.StartProcess(r.Path, r.Args, a)
}
