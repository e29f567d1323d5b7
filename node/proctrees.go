package node

import (
	"sync"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// lazyTrees is the node's one process tree Manager, shared by everything
// that starts processes (stdio and direct plugin hosts, MCP servers,
// placeholder commands): one cgroup platform or one /proc walker per
// daemon. It is made on first use, in the best mode the system allows, and
// closed when Run has stopped all of them.
type lazyTrees struct {
	once sync.Once
	m    *proctree.Manager // nil where process trees are unsupported
	log  zerolog.Logger
}

// get returns the Manager, making it on first use; nil (logged once) where
// process trees are unsupported: placeholder commands then stop their
// process group, and each host given nil tries and says what it does.
func (l *lazyTrees) get() *proctree.Manager {
	l.once.Do(func() {
		m, err := proctree.New(proctree.Options{Log: l.log})
		if err != nil {
			// Made at start for every node (the direct plugin host takes it),
			// so this must not read as if placeholder commands were configured.
			l.log.Warn().Err(err).Msg("process trees cannot be tracked here; placeholder commands, if any, " +
				"stop their process group at their end (the shell alone without groups)")
			return
		}
		l.m = m
	})
	return l.m
}

// close stops the Manager's background work; trees made after it are still
// tracked, but orphans are no longer reaped in the background.
func (l *lazyTrees) close() {
	l.once.Do(func() {}) // none made after this
	if l.m != nil {
		l.m.Close()
	}
}
