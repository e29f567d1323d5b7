package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// observables is what a reload can change, as the CLI shows it: `tools
// --all` (tools and skipped plugins), `placeholders` (keys and sources),
// `status` (config, hub, name), the registered manifests and the static
// plugins the refresher runs (what the plugin source keeps in force, its
// host and watched folders, is tested in toolsource/plugins).
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
		"static": static, "policy": n.disp.Policy(),
	}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A reload refused after the plugin scan (a plugin whose name an in-process
// tool already has) leaves everything as it was: no new scan visible, no
// new placeholder jobs, the old policy.
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
}
