package node

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A timeout set over the API is what the server is told, what a real
// slow plugin is cut off at, what `vcpnode tools` and a restarted node
// show; "default" gives the config's value back; a bad value changes
// nothing.
func TestToolTimeoutOverride(t *testing.T) {
	plugins, state := t.TempDir(), t.TempDir()
	// The plugin's own timeout (60 s) outlasts the test's patience (30 s):
	// a call that ends in a timeout was cut off at the override.
	writePlugin(t, plugins, "Sleeper", `{"name":"Sleeper","pluginType":"synchronous","entryPoint":{"command":"sleep 120"},`+
		`"communication":{"protocol":"stdio","timeout":60000}}`, nil)
	opts := pluginHarness(state, false, plugins).andConfig(func(c *config.Config) {
		c.Node.ExposedTools = []string{"Sleeper"}
	})
	h := startHarness(t, opts)
	first := h.accept()
	if _, m := registered(t, h, first); timeoutMs(m["Sleeper"]) != 60000 {
		t.Fatalf("Sleeper registered with %v", m["Sleeper"])
	}
	_, c := startControl(t, h, "")
	sleeper := func() controlapi.ToolStatus {
		t.Helper()
		var tools controlapi.ToolsResponse
		if err := c.Do(h.ctx, http.MethodGet, controlapi.PathTools, nil, &tools); err != nil {
			t.Fatal(err)
		}
		for _, ts := range tools.Tools {
			if ts.Name == "Sleeper" {
				return ts
			}
		}
		t.Fatalf("no Sleeper in %+v", tools.Tools)
		return controlapi.ToolStatus{}
	}

	// Bad values are refused and change nothing.
	for _, bad := range []string{"-5s", "0s", "999h", "soon"} {
		if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Sleeper/override", controlapi.ToolOverrideRequest{Timeout: bad}, nil); err == nil {
			t.Errorf("timeout %q was accepted", bad)
		}
	}
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Nope/override", controlapi.ToolOverrideRequest{Timeout: "2s"}, nil); err == nil {
		t.Error("an unknown tool's timeout was set")
	}
	if ts := sleeper(); ts.TimeoutMs != 60000 || ts.Override != nil {
		t.Fatalf("Sleeper after refused changes: %+v", ts)
	}

	var res controlapi.ToolOverrideResponse
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Sleeper/override", controlapi.ToolOverrideRequest{Timeout: "2s"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Reconnected || res.Override.Timeout.D() != 2*time.Second {
		t.Errorf("override answer: %+v", res)
	}
	select {
	case <-first.Done():
	case <-h.ctx.Done():
		t.Fatal("the node kept its connection after the override")
	}
	second := h.accept()
	if _, m := registered(t, h, second); timeoutMs(m["Sleeper"]) != 2000 {
		t.Errorf("Sleeper registered after the override with %v", m["Sleeper"])
	}
	if ts := sleeper(); ts.TimeoutMs != 2000 || ts.Override == nil || ts.Override.Timeout.D() != 2*time.Second {
		t.Errorf("Sleeper in /v1/tools: %+v", ts)
	}
	// 2 s less the node's margin (a tenth).
	if r := h.call(second, "Sleeper", nil); r.Status != wsproto.StatusError || !strings.Contains(r.Error, "timed out after 1.8s") {
		t.Errorf("slow call = %+v, want a timeout after 1.8s", r)
	}
	lr, err := c.Call(h.ctx, controlapi.CallRequest{Tool: "Sleeper"})
	if err != nil || lr.OK || lr.Outcome != "timeout" || !strings.Contains(lr.Error, "1.8s") {
		t.Errorf("slow local call = %+v, %v", lr, err)
	}

	// Both calls are counted for the console's "recently used" order, and
	// the tool's command comes with a call to load into the executor.
	if ts := sleeper(); ts.Calls != 2 || ts.LastCall == nil || ts.Call != "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Sleeper「末」\n<<<[END_TOOL_REQUEST]>>>" {
		t.Errorf("Sleeper's usage and call: %d calls, last %v, call %q", ts.Calls, ts.LastCall, ts.Call)
	}

	// A restart (a new node on the same state directory) keeps it.
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	h = startHarness(t, opts)
	if _, m := registered(t, h, h.accept()); timeoutMs(m["Sleeper"]) != 2000 {
		t.Errorf("Sleeper registered after a restart with %v", m["Sleeper"])
	}
	_, c = startControl(t, h, "")
	if ts := sleeper(); ts.TimeoutMs != 2000 || ts.Override == nil {
		t.Errorf("Sleeper after a restart: %+v", ts)
	}

	// "default": the plugin's own timeout again, and the override gone.
	var back controlapi.ToolOverrideResponse
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Sleeper/override", controlapi.ToolOverrideRequest{Timeout: config.TimeoutDefault}, &back); err != nil {
		t.Fatal(err)
	}
	if back.Override != (config.ToolOverride{}) {
		t.Errorf("override after default: %+v", back.Override)
	}
	if ts := sleeper(); ts.TimeoutMs != 60000 || ts.Override != nil {
		t.Errorf("Sleeper after default: %+v", ts)
	}
}

// timeoutMs is a registered manifest's communication.timeout.
func timeoutMs(m map[string]any) float64 {
	comm, _ := m["communication"].(map[string]any)
	ms, _ := comm["timeout"].(float64)
	return ms
}
