package node

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/wsproto"
)

// staticPluginDir writes a VCP static plugin folder (Weather, feeding two
// placeholders every ten seconds) and returns the Plugin directory.
func staticPluginDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Plugin")
	writePlugin(t, dir, "Weather", `{"name":"Weather","pluginType":"static","entryPoint":{"command":"sh run.sh"},
		"communication":{"protocol":"stdio","timeout":5000},"refreshIntervalCron":"*/10 * * * * *",
		"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Weather}}"},{"placeholder":"{{Wind}}"}]}}`,
		map[string]string{"run.sh": `echo '{"{{Weather}}":"sunny","{{Wind}}":"5 km/h"}'` + "\n"})
	return dir
}

func TestStaticPluginsThroughTheHub(t *testing.T) {
	dir := staticPluginDir(t)
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Plugins.Dirs = []string{dir}
		c.Plugins.StateDir = t.TempDir()
		c.Plugins.Watch = false
		c.Placeholders.PushInterval = config.Duration(100 * time.Millisecond)
	}})
	c := h.accept()
	seen := map[string]string{}
	for seen["{{Weather}}"] == "" || seen["{{Wind}}"] == "" {
		m, err := c.WaitType(h.ctx, wsproto.TypeUpdateStaticPlaceholders)
		if err != nil {
			t.Fatalf("waiting for the plugin's values: %v (seen %v)", err, seen)
		}
		for k, v := range m.(wsproto.UpdateStaticPlaceholders).Placeholders {
			seen[k] = v
		}
	}
	if seen["{{Weather}}"] != "sunny" || seen["{{Wind}}"] != "5 km/h" {
		t.Fatalf("pushed %v", seen)
	}
	// Static plugins are never registered as tools.
	m, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range m.(wsproto.RegisterTools).Tools {
		if strings.Contains(string(raw), `"Weather"`) {
			t.Fatalf("a static plugin was registered: %s", raw)
		}
	}
}
