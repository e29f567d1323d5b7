package control

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

// TestToolPeerRefused: a peer whose pid is a tool's process (here: this
// test process, as Options.ToolProcess says) may read the status but not
// approve a pending call or reload; another pid may.
func TestToolPeerRefused(t *testing.T) {
	h := startFake(t)
	var toolPid atomic.Int64
	srv, err := Listen(h.ctx, h.b, Options{Socket: testnet.SocketPath(t), Log: h.log,
		ToolProcess: func(pid int) bool { return int64(pid) == toolPid.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(h.ctx) })
	c := controlapi.NewControlClient(srv.Socket())
	t.Cleanup(c.Close)

	toolPid.Store(int64(os.Getpid()))
	if _, err := c.Status(h.ctx); err != nil {
		t.Errorf("status from a tool's process: %v", err)
	}
	_, err = c.Decide(h.ctx, "r1", true, "")
	if err == nil || !strings.Contains(err.Error(), "a process a tool started") {
		t.Fatalf("approve from a tool's process: %v", err)
	}
	// Nor remember an answer, nor forget one (a deny rule, say).
	if _, err := c.DecideWith(h.ctx, "1", true, controlapi.DecisionRequest{Always: true}); err == nil || !strings.Contains(err.Error(), "a process a tool started") {
		t.Errorf("approve --always from a tool's process: %v", err)
	}
	if _, err := c.ForgetRule(h.ctx, "Echo"); err == nil || !strings.Contains(err.Error(), "a process a tool started") {
		t.Errorf("forget from a tool's process: %v", err)
	}
	h.b.mu.Lock()
	reached := len(h.b.decisions)
	h.b.mu.Unlock()
	if reached != 0 {
		t.Errorf("the backend was asked %d times by a tool's process", reached)
	}
	c.Close() // a new connection: the peer is read at connect
	toolPid.Store(-1)
	c2 := controlapi.NewControlClient(srv.Socket())
	t.Cleanup(c2.Close)
	if _, err := c2.Decide(h.ctx, "r1", true, ""); err != nil && strings.Contains(err.Error(), "a process a tool started") {
		t.Errorf("approve from the owner: %v", err)
	}
	if res, err := c2.DecideWith(h.ctx, "1", true, controlapi.DecisionRequest{Always: true}); err != nil || res.Rule == nil {
		t.Errorf("approve --always from the owner: %+v, %v", res, err)
	}
	if _, err := c2.ForgetRule(h.ctx, "Echo"); err != nil {
		t.Errorf("forget from the owner: %v", err)
	}
}
