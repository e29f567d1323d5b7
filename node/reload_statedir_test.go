package node

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// outboxFiles lists the callbacks waiting in stateDir's outbox.
func outboxFiles(t *testing.T, stateDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(stateDir, "outbox"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestReloadMovingStateDirKeepsTheCallbacks: callbacks written into a
// connection and not confirmed, and one stored while the server is away,
// move with a reload that changes [plugins] state_dir: the new state
// directory holds them (where a restart would find them), the old one is
// released, and the next connection gets every one, in order.
func TestReloadMovingStateDirKeepsTheCallbacks(t *testing.T) {
	needCommands(t, "python3")
	plugins, oldState, newState := t.TempDir(), t.TempDir(), t.TempDir()
	gatedAsyncPlugin(t, plugins)
	h := startHarness(t, pluginHarness(oldState, false, plugins))
	c := h.accept()
	registered(t, h, c)
	base := callbackURL(h.node, "GatedAsync")
	post := func(task string) { postGatedCallback(t, base, task) }

	c.StopPonging() // what it reads is never confirmed
	unconfirmed := []string{"unconfirmed-1", "unconfirmed-2"}
	for _, task := range unconfirmed {
		post(task)
	}
	h.waitUntil("the callbacks to be written, unconfirmed", func() bool {
		return len(forwardedTasks(t, c)) == len(unconfirmed)
	})
	h.hub.Stop(h.ctx)
	h.waitState("disconnected", func(s ConnState) bool { return s.Phase != PhaseConnected })
	post("stored-1")
	want := append(slices.Clone(unconfirmed), "stored-1")
	if got := h.node.OutboxWaiting(); got != len(want) {
		t.Fatalf("outbox holds %d callbacks, want %d", got, len(want))
	}

	cfg := h.cfg
	cfg.Plugins.StateDir = newState
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if got := outboxFiles(t, newState); len(got) != len(want) {
		t.Errorf("the new state directory holds %v, want the %d callbacks", got, len(want))
	}
	if got := outboxFiles(t, oldState); len(got) != 0 {
		t.Errorf("left behind in the old state directory: %v", got)
	}
	if box, err := outbox.Open(oldState, make(chan struct{}, 1), h.node.log); err != nil {
		t.Errorf("the old state directory is still held: %v", err)
	} else {
		box.Close()
	}

	if err := h.hub.Resume(); err != nil {
		t.Fatal(err)
	}
	c2 := h.accept()
	h.waitUntil("the moved callbacks to arrive and be confirmed", func() bool {
		return len(forwardedTasks(t, c2)) >= len(want) && h.node.OutboxWaiting() == 0
	})
	if got := forwardedTasks(t, c2); !slices.Equal(got, want) {
		t.Errorf("the next connection got %v, want %v", got, want)
	}
	post("after")
	h.waitUntil("a callback stored in the new state directory", func() bool {
		return len(forwardedTasks(t, c2)) == len(want)+1 && h.node.OutboxWaiting() == 0
	})
	if got := outboxFiles(t, newState); len(got) != 0 {
		t.Errorf("the new state directory still holds %v after the confirmations", got)
	}
}

// TestReloadToAStateDirInUseIsRefused: a new state directory another
// daemon holds refuses the reload, and the old one stays in force.
func TestReloadToAStateDirInUseIsRefused(t *testing.T) {
	oldState, newState := t.TempDir(), t.TempDir()
	h := startHarness(t, pluginHarness(oldState, false, t.TempDir()))
	h.accept()
	other, err := outbox.Open(newState, make(chan struct{}, 1), h.node.log)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cfg := h.cfg
	cfg.Plugins.StateDir = newState
	if _, err := h.node.Reload(cfg); err == nil || !strings.Contains(err.Error(), "in use by another vcpnode") {
		t.Fatalf("reload to a state directory in use: %v", err)
	}
	if _, err := outbox.Open(oldState, make(chan struct{}, 1), h.node.log); err == nil {
		t.Error("the old state directory was released by a refused reload")
	}
}

// TestReloadMovingStateDirCarriesThePins: each plugin folder's first name
// moves with a reload that changes [plugins] state_dir, so that after a
// restart on the new state directory a plugin that renamed itself in its
// manifest still answers to its first name (and its owner's rules).
func TestReloadMovingStateDirCarriesThePins(t *testing.T) {
	plugins, oldState, newState := t.TempDir(), t.TempDir(), t.TempDir()
	manifest := `{"name":"%s","pluginType":"synchronous","entryPoint":{"command":"sh run.sh"},"communication":{"protocol":"stdio","timeout":30000}}`
	writePlugin(t, plugins, "Pinned", fmt.Sprintf(manifest, "Pinned"), map[string]string{"run.sh": `echo '{"status":"success","result":"ok"}'`})
	h := startHarness(t, pluginHarness(oldState, false, plugins))
	if names, _ := registered(t, h, h.accept()); !slices.Contains(names, "Pinned") {
		t.Fatalf("registered %v", names)
	}
	cfg := h.cfg
	cfg.Plugins.StateDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.Plugins.StateDir, plugin.PinsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Reload(cfg); err == nil || !strings.Contains(err.Error(), "plugin identities") {
		t.Errorf("a reload to a state directory with an unreadable identities file: %v, want it refused", err)
	}
	cfg.Plugins.StateDir = newState
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}

	writePlugin(t, plugins, "Pinned", fmt.Sprintf(manifest, "Freed"), nil)
	h2 := startHarness(t, pluginHarness(newState, false, plugins))
	names, _ := registered(t, h2, h2.accept())
	if !slices.Contains(names, "Pinned") || slices.Contains(names, "Freed") {
		t.Errorf("after a restart on the new state directory the renamed plugin registered as %v, want Pinned", names)
	}
}
