package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// restartOn runs a new node with cfg against h's hub (a restart of the
// daemon: nothing shared with the first but the state directory), waits
// until it is connected and returns it; stop ends it.
func restartOn(t *testing.T, h *harness, cfg config.Config) (n *Node, stop func()) {
	t.Helper()
	n, err := New(cfg, zerolog.New(&testlog.Buffer{}), WithTools(toolhost.NewEchoTool()),
		withTimings(testTimings()), WithGetenv(func(string) string { return "" }),
		WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.12"}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Error("the node did not stop")
			}
		})
	}
	t.Cleanup(stop)
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	h.acceptObserver(demohub.ChannelVCPLog)
	if !testwait.Poll(h.ctx, func() bool { s, _ := n.State(); return s.Phase == PhaseConnected && observersUp(n) }) {
		t.Fatal("the restarted node never connected")
	}
	return n, stop
}

// startPathOnly runs a node in "both" mode with state as its state
// directory against a hub that takes the key only in the path, and waits
// until its connection and its VCPlog channel are up.
func startPathOnly(t *testing.T, state string) (*harness, ConnState) {
	t.Helper()
	h := startHarness(t, harnessOpt{hubOpts: demohub.Options{Auth: demohub.AuthPath}, config: func(c *config.Config) {
		c.Plugins.StateDir = state
		c.Node.Mode = config.ModeBoth
		c.Observer.Channels = []string{"VCPlog"}
	}})
	h.accept()
	h.acceptObserver(demohub.ChannelVCPLog)
	st := h.waitState("connected", func(s ConnState) bool { return s.Phase == PhaseConnected })
	if !testwait.Poll(h.ctx, func() bool { return observersUp(h.node) }) {
		t.Fatal("the observer never connected")
	}
	return h, st
}

// observersUp says whether every observer channel of n is connected.
func observersUp(n *Node) bool {
	obs := n.ObserverStatuses()
	for _, o := range obs {
		if o.Phase != PhaseConnected {
			return false
		}
	}
	return len(obs) > 0
}

// [hub] auth = "auto" against a server that takes the key only in the
// path: the first start spends one dropped key-less handshake and keeps
// the way in the state directory (without the key), for the node's
// connection and its observer channel; a restart goes straight to the
// path and says the way was remembered. A remembered way
// that stops working falls back to the other and is learned anew.
func TestHubAuthRememberedAcrossRestart(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	h, first := startPathOnly(t, state)
	if first.Auth != "path" || first.AuthRemembered {
		t.Fatalf("first start: auth %q, remembered %v; want path, learned", first.Auth, first.AuthRemembered)
	}
	_, refused := h.hub.Handshakes()
	if refused != 2 {
		t.Fatalf("the first start had %d handshakes dropped, want 2 (the header tried first, by the node and the observer)", refused)
	}
	file := filepath.Join(state, config.HubAuthFile)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("the way was not kept: %v", err)
	}
	data, _ := os.ReadFile(file)
	if fi.Mode().Perm() != 0o600 || strings.Count(string(data), `": "path"`) != 2 || strings.Contains(string(data), testKey) ||
		strings.Contains(string(data), "VCP_Key") {
		t.Fatalf("%s (mode %v):\n%s", file, fi.Mode().Perm(), data)
	}

	// A restart: the path first, no dropped handshake.
	n, stop := restartOn(t, h, h.cfg)
	if _, again := h.hub.Handshakes(); again != refused {
		t.Errorf("the restart had %d handshakes dropped; the way should have been remembered", again-refused)
	}
	if s, _ := n.State(); s.Auth != "path" || !s.AuthRemembered {
		t.Errorf("after the restart: auth %q, remembered %v; want path, remembered", s.Auth, s.AuthRemembered)
	}
	if st := n.Status(); !st.Connection.AuthRemembered {
		t.Errorf("status does not say the way was remembered: %+v", st.Connection)
	}
	stop()

	// The remembered way stops working (the file says header, as if the
	// server had gone back to the old way): one dropped handshake, then the
	// path, learned anew and kept.
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(data), `"path"`, `"header"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, before := h.hub.Handshakes()
	n, _ = restartOn(t, h, h.cfg)
	if _, after := h.hub.Handshakes(); after != before+2 {
		t.Errorf("%d handshakes dropped after a wrong remembered way, want 2 (the node's and the observer's)", after-before)
	}
	if s, _ := n.State(); s.Auth != "path" || s.AuthRemembered || s.HandshakesDropped != 0 {
		t.Errorf("after falling back: %+v", s)
	}
	if again, _ := os.ReadFile(file); strings.Count(string(again), `": "path"`) != 2 || strings.Contains(string(again), "header") {
		t.Errorf("the way was not learned anew:\n%s", again)
	}
}
