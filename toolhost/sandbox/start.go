package sandbox

import (
	"os"
	"os/exec"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// StartProcess starts the run's command (Path, Args, Env; attr gives the
// rest) confined, as the leader of a new process tree of trees.
func (r *Run) StartProcess(trees *proctree.Manager, attr *os.ProcAttr) (*os.Process, *proctree.Tree, error) {
	a := *attr
	a.Env = r.Env
	return r.startProcess(trees, &a)
}

// StartCmd is StartProcess for callers that keep exec.Cmd (proctree's
// StartCmd): newCmd builds the command, whose Env is replaced by the Run's.
func (r *Run) StartCmd(trees *proctree.Manager, newCmd func() *exec.Cmd) (*exec.Cmd, *proctree.Tree, error) {
	return r.startCmd(trees, func() *exec.Cmd {
		c := newCmd()
		c.Env = r.Env
		return c
	})
}
