package node

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestWarmPluginsFollowTheConfig: with [plugins] warm = "python" the
// example Python plugins get waiting interpreters and calls run in them
// (an asynchronous one's callback still arrives);
// a reload that turns warm off leaves none waiting and no process running.
func TestWarmPluginsFollowTheConfig(t *testing.T) {
	needCommands(t, "python3")
	h := startHarness(t, loadedMachine(pluginHarness(t.TempDir(), false, examplePlugins(t)), "UnitConverter").
		andConfig(func(c *config.Config) { c.Plugins.Warm = "python" }))
	c := h.accept()
	registered(t, h, c)
	waiting := func() bool { return h.node.PluginWarmWaiting() == 2 } // UnitConverter and DelayedEcho
	h.waitUntil("two warm interpreters", waiting)
	res := h.call(c, "UnitConverter", map[string]any{"command": "Convert", "value": "10", "from": "km", "to": "mi"})
	if res.Status != wsproto.StatusSuccess || !strings.Contains(firstText(t, res), "10 km = 6.21371 mi") {
		t.Fatalf("UnitConverter = %+v", res)
	}
	if n := h.node.PluginWarmCalls(); n != 1 {
		t.Errorf("%d calls ran warm, want 1", n)
	}

	// An asynchronous plugin answers from a warm interpreter, and its
	// worker's callback still reaches the server.
	h.waitUntil("two warm interpreters again", waiting)
	res = h.call(c, "DelayedEcho", map[string]any{"text": "warm and later", "delay": "0"})
	if res.Status != wsproto.StatusSuccess {
		t.Fatalf("DelayedEcho: %s", res.Error)
	}
	if n := h.node.PluginWarmCalls(); n != 2 {
		t.Errorf("%d calls ran warm, want 2", n)
	}
	if _, data := waitForwarded(t, h, c); !strings.Contains(fmt.Sprint(data["message"]), "warm and later") {
		t.Errorf("forwarded %v", data)
	}
	// Then only the two waiting interpreters run (the one that answered
	// ended); they are no call, so no plugin process runs one.
	h.waitUntil("the asynchronous run to end", func() bool { return waiting() && h.node.PluginProcesses() == 0 })
	// Status and metrics show the pools: a waiting interpreter is no call.
	want := controlapi.PluginsStatus{Calls: 0, WarmWaiting: 2, WarmCalls: 2, Warm: []controlapi.WarmPoolStatus{
		{Plugin: "DelayedEcho", Waiting: 1, Size: 1}, {Plugin: "UnitConverter", Waiting: 1, Size: 1},
	}}
	if got := h.node.Status().Plugins; !reflect.DeepEqual(got, want) {
		t.Errorf("status plugins = %+v, want %+v", got, want)
	}
	m := scrape(t, h.ctx, startMetrics(t, h).Addr())
	for name, want := range map[string]float64{"vcpnode_plugin_warm_waiting": 2, "vcpnode_plugin_warm_calls_total": 2} {
		if got, ok := metricValue(m, name, nil); !ok || got != want {
			t.Errorf("%s = %v (found %v), want %v", name, got, ok, want)
		}
	}

	cfg := h.cfg
	cfg.Plugins.Warm = ""
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if n := h.node.PluginWarmWaiting(); n != 0 {
		t.Errorf("%d interpreters still wait after warm was turned off", n)
	}
	if n := h.node.PluginProcesses(); n != 0 {
		t.Errorf("%d plugin processes after warm was turned off", n)
	}
}
