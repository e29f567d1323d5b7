package node

import (
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// Phase is where the reconnect loop is, in the control API's words.
type Phase = controlapi.Phase

// Phases of the connection, as shown by `vcpnode status`.
const (
	PhaseConnecting = controlapi.PhaseConnecting
	PhaseConnected  = controlapi.PhaseConnected
	PhaseBackoff    = controlapi.PhaseBackoff
	PhaseStopping   = controlapi.PhaseStopping
	PhaseStopped    = controlapi.PhaseStopped
)

// ConnState is a snapshot of the hub connection: the status the control
// API sends, so a field added there is kept here. The box below keeps
// Since (when the current phase began), DisconnectedAt, LastErrorAt,
// LastErrorEarlier and Reconnects; the reconnect loop sets the rest, and
// the node adds ToolsHeld when it answers a status request.
type ConnState = controlapi.ConnectionStatus

// stateBox guards the connection state; the reconnect loop writes, status readers read.
type stateBox struct {
	mu      sync.Mutex
	s       ConnState
	changed chan struct{} // closed and replaced on every change, so waiters need no polling
}

func newStateBox() *stateBox {
	now := time.Now()
	return &stateBox{s: ConnState{Phase: PhaseConnecting, Since: now, DisconnectedAt: now}, changed: make(chan struct{})}
}

func (b *stateBox) update(f func(*ConnState)) {
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
		case b.s.Phase == PhaseConnected:
			b.s.DisconnectedAt = time.Time{}
		case old.Phase == PhaseConnected:
			b.s.DisconnectedAt = now
			b.s.Registered = false
		}
	}
	if b.s.Phase != PhaseConnected {
		b.s.Registered = false
	}
	if b.s.Phase != PhaseBackoff {
		b.s.RetryAt = time.Time{}
	}
	b.s.Reconnects = max(b.s.Sessions-1, 0)
	// A new error is a new text or one more failed attempt; the reset of
	// the count on connecting is not one.
	if b.s.LastError != "" && (b.s.LastError != old.LastError || b.s.Attempt > old.Attempt) {
		b.s.LastErrorAt = now
		b.s.LastErrorEarlier = false
	}
	if b.s.Phase == PhaseConnected && old.Phase != PhaseConnected && b.s.LastError != "" {
		b.s.LastErrorEarlier = true
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *stateBox) get() (ConnState, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.s, b.changed
}
