package node

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/vcpnode/vcpnode/config"
)

// A fatal stop is a panic in a goroutine Run owns (the connect loop, a
// session's reader and decoder, the observers, the plugin watcher, the MCP
// follower, a placeholder source's run…): a bug, not a condition the node
// can retry. (A bad key cannot be told from a server restart, so the
// connect loop rightly never gives up.) The panic is recovered and logged
// with its stack, the node shuts down as on a stop asked through ctx
// (calls answered or cancelled, plugin processes stopped), and Run returns
// what failed, so that the service manager sees a failure and restarts
// the daemon.
type runFailure struct {
	mu   sync.Mutex
	err  error                   // the first fatal failure
	stop context.CancelCauseFunc // stops Run; nil outside Run
}

// guard runs f and turns a panic in it into a fatal stop. Call it at the
// top of every goroutine Run owns.
func (n *Node) guard(what string, f func()) {
	defer n.recoverFatal(what)
	f()
}

// recoverFatal, deferred, turns a panic into a fatal stop.
func (n *Node) recoverFatal(what string) {
	if r := recover(); r != nil {
		n.fatal(what, r)
	}
}

func (n *Node) fatal(what string, r any) {
	err := fmt.Errorf("%s panicked: %s", what, config.Redact(fmt.Sprint(r)))
	n.log.Error().Err(err).Str("stack", config.Redact(string(debug.Stack()))).
		Msg("fatal: stopping the node; the service manager should start it again")
	n.failure.mu.Lock()
	if n.failure.err == nil {
		n.failure.err = err
	}
	stop := n.failure.stop
	n.failure.mu.Unlock()
	if stop != nil {
		stop(err)
	}
}

// failed is the first fatal failure, or nil.
func (n *Node) failed() error {
	n.failure.mu.Lock()
	defer n.failure.mu.Unlock()
	return n.failure.err
}
