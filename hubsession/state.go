package hubsession

import (
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// connState is a snapshot of the hub connection: the status the control
// API sends, so a field added there is kept here. The box below keeps
// Since (when the current phase began), DisconnectedAt, LastErrorAt,
// LastErrorEarlier and Reconnects; the reconnect loop sets the rest.
type connState = controlapi.ConnectionStatus

// stateBox guards the connection state; the reconnect loop writes, status readers read.
type stateBox struct {
	mu      sync.Mutex
	s       connState
	changed chan struct{} // closed and replaced on every change, so waiters need no polling
}

func newStateBox() *stateBox {
	now := time.Now()
	return &stateBox{s: connState{Phase: controlapi.PhaseConnecting, Since: now, DisconnectedAt: now}, changed: make(chan struct{})}
}

func (b *stateBox) update(f func(*connState)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.s
	f(&b.s)
	// Text from the server (close reasons, serverId) may echo the key.
	b.s.LastError, b.s.ServerID = config.Redact(b.s.LastError), config.Redact(b.s.ServerID)
	now := time.Now()
	if b.s.Phase != old.Phase {
		b.s.Since = now
		switch {
		case b.s.Phase == controlapi.PhaseConnected:
			b.s.DisconnectedAt = time.Time{}
		case old.Phase == controlapi.PhaseConnected:
			b.s.DisconnectedAt = now
			b.s.Registered = false
		}
	}
	if b.s.Phase != controlapi.PhaseConnected {
		b.s.Registered = false
	}
	if b.s.Phase != controlapi.PhaseBackoff {
		b.s.RetryAt = time.Time{}
	}
	b.s.Reconnects = max(b.s.Sessions-1, 0)
	// A new error is a new text or one more failed attempt; the reset of
	// the count on connecting is not one.
	if b.s.LastError != "" && (b.s.LastError != old.LastError || b.s.Attempt > old.Attempt) {
		b.s.LastErrorAt = now
		b.s.LastErrorEarlier = false
	}
	if b.s.Phase == controlapi.PhaseConnected && old.Phase != controlapi.PhaseConnected && b.s.LastError != "" {
		b.s.LastErrorEarlier = true
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *stateBox) get() (connState, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.s, b.changed
}
