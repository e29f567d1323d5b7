package hubsession

import (
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
)

// The time since the drop survives the attempts that follow it; the last
// error gets a time whenever it is set again; registration ends with the
// connection.
func TestStateBoxTracksTheDrop(t *testing.T) {
	b := newStateBox()
	started, _ := b.get()
	if started.DisconnectedAt.IsZero() {
		t.Fatal("before the first connection, DisconnectedAt should be the start")
	}
	b.update(func(s *connState) { s.Phase = controlapi.PhaseConnected })
	b.update(func(s *connState) { s.Registered = true })
	if s, _ := b.get(); !s.DisconnectedAt.IsZero() || !s.Registered {
		t.Fatalf("connected: %+v", s)
	}
	b.update(func(s *connState) { s.Phase = controlapi.PhaseBackoff; s.Attempt = 1; s.LastError = "refused" })
	drop, _ := b.get()
	if drop.DisconnectedAt.IsZero() || drop.Registered || drop.LastErrorAt.IsZero() {
		t.Fatalf("after the drop: %+v", drop)
	}
	b.update(func(s *connState) { s.Phase = controlapi.PhaseConnecting })
	b.update(func(s *connState) { s.Phase = controlapi.PhaseBackoff; s.Attempt = 2; s.LastError = "refused" })
	again, _ := b.get()
	if !again.DisconnectedAt.Equal(drop.DisconnectedAt) || !again.Since.After(drop.Since) {
		t.Errorf("a later attempt moved DisconnectedAt (%v → %v) or kept Since", drop.DisconnectedAt, again.DisconnectedAt)
	}
	if !again.LastErrorAt.After(drop.LastErrorAt) {
		t.Errorf("the same error at a new attempt kept its old time %v", again.LastErrorAt)
	}
}
