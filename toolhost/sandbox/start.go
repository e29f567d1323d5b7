package sandbox

import (
	"os"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// StartProcess starts the run's command (Path, Args, Env; attr gives the
// rest) confined, as the leader of a new process tree of trees: in a
// launcher that was waiting for a call when calls come often
// (pool_linux.go), else in one started for it.
func (r *Run) StartProcess(trees *proctree.Manager, attr *os.ProcAttr) (*os.Process, *proctree.Tree, error) {
	a := *attr
	a.Env = r.Env
	return r.startProcess(trees, &a)
}
