package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestHubAuthFileFollowsAReload: a reload that moves the state directory
// writes the ways known (the node's connection's and its observer
// channel's) into the new directory's file at once, so a restart from it
// spends no dropped handshake; a reload to another hub keeps that hub's
// way there too, and the old directory's file is left as it was.
func TestHubAuthFileFollowsAReload(t *testing.T) {
	t.Parallel()
	oldState, newState := t.TempDir(), t.TempDir()
	h, _ := startPathOnly(t, oldState) // auth_remember_test.go
	oldFile, newFile := filepath.Join(oldState, config.HubAuthFile), filepath.Join(newState, config.HubAuthFile)
	ways := func(file string) string {
		data, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(data)
	}
	if got := ways(oldFile); strings.Count(got, `": "path"`) != 2 {
		t.Fatalf("the first state directory's file:\n%s", got)
	}

	cfg := h.cfg
	cfg.Plugins.StateDir = newState
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if got := ways(newFile); strings.Count(got, `": "path"`) != 2 || strings.Contains(got, testKey) {
		t.Fatalf("after the reload the new state directory's file holds:\n%s", got)
	}
	_, refused := h.hub.Handshakes()
	n, stop := restartOn(t, h, cfg)
	if _, again := h.hub.Handshakes(); again != refused {
		t.Errorf("a restart from the new state directory had %d handshakes dropped", again-refused)
	}
	if s, _ := n.State(); !s.AuthRemembered {
		t.Errorf("a restart from the new state directory did not use the way kept: %+v", s)
	}
	stop()

	// Another hub: its way, learned, is kept in the new directory too.
	before := ways(oldFile)
	other, err := demohub.Start(demohub.Options{Key: fakehub.TestKey, Auth: demohub.AuthPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	cfg.Hub.URL = other.BaseURL()
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Accept(h.ctx); err != nil {
		t.Fatal(err)
	}
	endpoint := strings.Replace(other.BaseURL(), "http://", "ws://", 1) + "/vcp-distributed-server"
	if !testwait.Poll(h.ctx, func() bool { return strings.Contains(ways(newFile), `"`+endpoint+`": "path"`) }) {
		t.Fatalf("the other hub's way is not kept in the new state directory:\n%s", ways(newFile))
	}
	if got := ways(oldFile); got != before {
		t.Errorf("the old state directory's file changed after the move:\n%s", got)
	}
}
