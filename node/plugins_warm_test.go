package node

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestWarmPluginsFollowTheConfig: with [plugins] warm = "python" the
// example Python plugins get waiting interpreters and a call runs in one;
// a reload that turns warm off leaves none waiting and no process running.
func TestWarmPluginsFollowTheConfig(t *testing.T) {
	needCommands(t, "python3")
	h := startHarness(t, loadedMachine(pluginHarness(t.TempDir(), false, examplePlugins(t)), "UnitConverter").
		andConfig(func(c *config.Config) { c.Plugins.Warm = "python" }))
	c := h.accept()
	registered(t, h, c)
	host := func() *plugin.Host {
		h.node.plugins.mu.Lock()
		defer h.node.plugins.mu.Unlock()
		return h.node.plugins.host
	}
	waitWarm := func(n int) {
		t.Helper()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for host().WarmWaiting() < n {
			select {
			case <-tick.C:
			case <-h.ctx.Done():
				t.Fatalf("gave up waiting for %d warm interpreters (%d)", n, host().WarmWaiting())
			}
		}
	}
	waitWarm(2) // UnitConverter and DelayedEcho
	res := h.call(c, "UnitConverter", map[string]any{"command": "Convert", "value": "10", "from": "km", "to": "mi"})
	if res.Status != wsproto.StatusSuccess || !strings.Contains(firstText(t, res), "10 km = 6.21371 mi") {
		t.Fatalf("UnitConverter = %+v", res)
	}
	if n := host().WarmCalls(); n != 1 {
		t.Errorf("%d calls ran warm, want 1", n)
	}

	cfg := h.cfg
	cfg.Plugins.Warm = ""
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if n := host().WarmWaiting(); n != 0 {
		t.Errorf("%d interpreters still wait after warm was turned off", n)
	}
	if n := h.node.PluginProcesses(); n != 0 {
		t.Errorf("%d plugin processes after warm was turned off", n)
	}
}
