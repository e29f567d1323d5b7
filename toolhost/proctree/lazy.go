package proctree

import (
	"sync"

	"github.com/rs/zerolog"
)

// Lazy is a daemon's one Manager, shared by everything that starts
// processes (stdio and direct plugin hosts, MCP servers, placeholder
// commands): one cgroup platform or one /proc walker per daemon. It is
// made on first use, in the best mode the system allows, and closed when
// every process starter has stopped.
type Lazy struct {
	once sync.Once
	m    *Manager // nil where process trees are unsupported
	log  zerolog.Logger
}

// NewLazy returns a Lazy whose Manager logs to log.
func NewLazy(log zerolog.Logger) *Lazy { return &Lazy{log: log} }

// Get returns the Manager, making it on first use; nil (logged once) where
// process trees are unsupported: placeholder commands then stop their
// process group, and each host given nil tries and says what it does.
func (l *Lazy) Get() *Manager {
	l.once.Do(func() {
		m, err := New(Options{Log: l.log})
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

// Close stops the Manager's background work; trees made after it are still
// tracked, but orphans are no longer reaped in the background.
func (l *Lazy) Close() {
	l.once.Do(func() {}) // none made after this
	if l.m != nil {
		l.m.Close()
	}
}
