package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// observables is what a reload can change, as the CLI shows it: `tools
// --all` (tools and skipped plugins), `placeholders` (keys and sources),
// `status` (config, hub, name), the registered manifests, the static
// plugins the refresher runs and the folders the watcher watches.
func observables(t *testing.T, n *Node) string {
	t.Helper()
	ph := n.Placeholders()
	var keys, sources []string
	for _, p := range ph.Placeholders {
		keys = append(keys, p.Key)
	}
	for _, s := range ph.Sources {
		sources = append(sources, s.Name+":"+strings.Join(s.Placeholders, ","))
	}
	var static []string
	for _, s := range n.StaticPlugins() {
		static = append(static, s.Name)
	}
	manifests, err := n.disp.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(map[string]any{
		"tools": n.Tools(), "skipped": n.SkippedPlugins(), "placeholders": keys, "sources": sources,
		"config": n.Config().Redacted(), "hub": n.HubURL(), "name": n.Name(), "manifests": manifests,
		"static": static, "watch": n.plugins.watchTargets(), "policy": n.disp.Policy(),
	}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A reload refused after the plugin scan (a plugin whose name an in-process
// tool already has) leaves everything as it was: no new scan visible, no
// new host, no new placeholder jobs, the old policy.
func TestRefusedReloadLeavesEveryObservableAsItWas(t *testing.T) {
	needCommands(t, "sh")
	dirs := []string{t.TempDir(), t.TempDir()}
	writePlugin(t, dirs[0], "Answer", syncManifest("Answer", "answers"), map[string]string{"answer.sh": answerScript})
	opt := pluginHarness(t.TempDir(), true, dirs[0]).andConfig(func(c *config.Config) {
		c.Placeholders.Values = map[string]string{"Fixed": "one"}
	})
	h := startHarness(t, opt)
	h.accept()
	h.waitState("connected", func(s ConnState) bool { return s.Phase == PhaseConnected })
	before := observables(t, h.node)
	host := h.node.plugins.host

	// The second folder brings a static plugin and a plugin named like the
	// harness's in-process Echo: the registry refuses the duplicate.
	writePlugin(t, dirs[1], "Weather", `{"name":"Weather","pluginType":"static","entryPoint":{"command":"echo sunny"},
"communication":{"protocol":"stdio","timeout":5000},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Weather}}"}]}}`, nil)
	writePlugin(t, dirs[1], "EchoClash", syncManifest("Echo", "clashes with the in-process Echo"), map[string]string{"answer.sh": answerScript})
	cfg := h.node.Config()
	cfg.Plugins.Dirs = dirs
	cfg.Plugins.MaxOutputBytes++ // a new plugin host
	cfg.Placeholders.Values = map[string]string{"Fixed": "two", "Other": "x"}
	cfg.Node.HiddenTools = []string{"Answer"}
	cfg.Plugins.Watch = false

	_, err := h.node.Reload(cfg)
	if err == nil || !strings.Contains(err.Error(), "old one stays in force") || !strings.Contains(err.Error(), `"Echo"`) {
		t.Fatalf("Reload = %v, want a refusal naming the duplicate Echo", err)
	}
	if after := observables(t, h.node); after != before {
		t.Errorf("a refused reload changed what the node shows:\nbefore %s\nafter  %s", before, after)
	}
	if h.node.plugins.host != host {
		t.Error("a refused reload replaced the plugin host")
	}

	// The same config without the clash goes through whole.
	if err := os.RemoveAll(filepath.Join(dirs[1], "EchoClash")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	after := observables(t, h.node)
	for _, want := range []string{`"Weather"`, `"{{Other}}"`, `"Answer"`} {
		if !strings.Contains(after, want) {
			t.Errorf("after an accepted reload, %s is missing:\n%s", want, after)
		}
	}
	if h.node.plugins.host == host {
		t.Error("an accepted reload with new plugin settings kept the old host")
	}
}

// Retired plugin hosts are closed once nothing runs on them, and their
// kills still count.
func TestRetiredPluginHostsArePruned(t *testing.T) {
	needCommands(t, "sh")
	dir := t.TempDir()
	writePlugin(t, dir, "Answer", syncManifest("Answer", "answers"), map[string]string{"answer.sh": answerScript})
	h := startHarness(t, pluginHarness(t.TempDir(), false, dir))
	h.accept()
	cfg := h.node.Config()
	var hosts []*plugin.Host
	for range 3 {
		hosts = append(hosts, h.node.plugins.host)
		cfg.Plugins.MaxOutputBytes++
		if _, err := h.node.Reload(cfg); err != nil {
			t.Fatal(err)
		}
	}
	h.node.plugins.mu.Lock()
	retired := slices.Clone(h.node.plugins.retired)
	h.node.plugins.mu.Unlock()
	if len(retired) != 0 {
		t.Errorf("%d retired hosts kept with nothing running on them", len(retired))
	}
	if h.node.plugins.host == hosts[0] || len(hosts) != 3 {
		t.Error("reloads with new plugin settings did not make new hosts")
	}
}
