//go:build linux

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestNodeSandboxesPlugins: the node's plugins run under their profiles
// (a file outside every grant is refused), status and the tool list say
// which, and a reload naming an unknown profile keeps the old settings.
func TestNodeSandboxesPlugins(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	root, private := t.TempDir(), t.TempDir()
	secret := filepath.Join(private, "secret.txt")
	for name, body := range map[string]string{
		secret: "PRIVATE\n",
		filepath.Join(root, "Probe", "plugin-manifest.json"): `{"name":"Probe","pluginType":"synchronous","entryPoint":{"command":"sh probe.sh"}}`,
		filepath.Join(root, "Probe", "probe.sh"):             "cat " + secret + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Hub.URL, cfg.Hub.Key = "ws://127.0.0.1:1", testKey
	cfg.Plugins.Dirs = []string{root}
	cfg.Plugins.StateDir = t.TempDir()
	cfg.Tools = map[string]config.ToolConfig{"Probe": {Sandbox: "offline"}}
	n, err := New(cfg, zerolog.Nop(), WithGetenv(noEnv(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.CloseLocal)
	sb := n.Status().Sandbox
	if sb == nil || sb.Default != "default" {
		t.Fatalf("status has no sandbox section: %+v", sb)
	}
	if sb.Mechanism != "landlock" {
		t.Fatalf("status says the mechanism is %q where Landlock is available (%s)", sb.Mechanism, sb.Why)
	}
	profile := ""
	for _, ts := range n.ToolStatuses().Tools {
		if ts.Name == "Probe" {
			profile = ts.Sandbox
		}
	}
	if profile != "offline" {
		t.Errorf("tools show Probe's profile as %q, want offline", profile)
	}
	out := n.CallLocal(context.Background(), "r1", "Probe", nil)
	if !strings.Contains(out.Err, `was refused by the node's sandbox (profile "offline")`) || strings.Contains(out.Err, "PRIVATE") {
		t.Errorf("the confined plugin's outcome: %+v", out)
	}
	bad := cfg
	bad.Tools = map[string]config.ToolConfig{"Probe": {Sandbox: "nosuch"}}
	if _, err := n.Reload(bad); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("reload with an unknown profile: %v", err)
	}
	if got := n.sandbox.ProfileFor("Probe"); got != "offline" {
		t.Errorf("after the refused reload Probe runs under %q", got)
	}
}
