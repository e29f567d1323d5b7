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

// ConnState is a snapshot of the hub connection.
type ConnState struct {
	Phase Phase
	// Since is when the current phase began.
	Since time.Time
	// ServerID is from the last connection_ack ("" on old servers).
	ServerID string
	// Attempt counts failed attempts since the last good session.
	Attempt int
	// RetryAt is when the next attempt starts (PhaseBackoff only).
	RetryAt time.Time
	// LastError is the last connection error, already redacted, and
	// LastErrorAt when it happened. It is kept once connected again, for
	// the record, with LastErrorEarlier set: it belongs to an earlier
	// connection or its attempts, not to the current one.
	LastError        string
	LastErrorAt      time.Time
	LastErrorEarlier bool
	// DisconnectedAt is when the last connection ended (or the daemon
	// started, before the first one); zero while connected. Since only
	// covers the current phase, which restarts with every attempt.
	DisconnectedAt time.Time
	// HandshakesDropped counts the attempts in a row whose handshake the
	// server dropped before any HTTP answer (a wrong key or path, a proxy,
	// a restarting server); 0 once connected.
	HandshakesDropped int
	// Registered says the tools of the current connection are on the wire
	// (register_tools sent); false whenever not connected.
	Registered bool
	// Sessions counts connections that were established.
	Sessions int
}

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
