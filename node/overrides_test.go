package node

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
)

// A switch set over the API is saved in the state directory, changes the
// server's registration at once, and is kept across a reload and a restart;
// a reset gives the config file's value back.
func TestToolOverridesPersist(t *testing.T) {
	state := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "c.toml")
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Plugins.StateDir = state }})
	first := h.accept()
	if got, _ := registered(t, h, first); strings.Join(got, ",") != "Echo" {
		t.Fatalf("registered at start: %v", got)
	}
	_, c := startControl(t, h, cfgFile)
	var tools controlapi.ToolsResponse
	if err := c.Do(h.ctx, http.MethodGet, controlapi.PathTools, nil, &tools); err != nil || tools.OverridesFile != filepath.Join(state, config.OverridesFile) {
		t.Fatalf("tools: %v, overrides file %q", err, tools.OverridesFile)
	}

	no := false
	var res controlapi.ToolOverrideResponse
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Echo/override", controlapi.ToolOverrideRequest{Expose: &no, Approval: "ask"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Reconnected || res.Override.Expose == nil || *res.Override.Expose || res.Override.Approval != "ask" {
		t.Errorf("override answer: %+v", res)
	}
	<-first.Done()
	second := h.accept()
	if got, _ := registered(t, h, second); len(got) != 0 {
		t.Errorf("registered after switching Echo off: %v", got)
	}
	data, err := os.ReadFile(filepath.Join(state, config.OverridesFile))
	if err != nil || !strings.Contains(string(data), `"approval": "ask"`) {
		t.Fatalf("overrides file: %s, %v", data, err)
	}
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Nope/override", controlapi.ToolOverrideRequest{Expose: &no}, nil); err == nil {
		t.Error("an unknown tool was switched")
	}
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Echo/override", controlapi.ToolOverrideRequest{Approval: "maybe"}, nil); err == nil {
		t.Error("approval maybe was accepted")
	}

	// A reload of the same file keeps the switch.
	if _, err := h.node.Reload(h.cfg); err != nil {
		t.Fatal(err)
	}
	var echo controlapi.ToolStatus
	if err := c.Do(h.ctx, http.MethodGet, controlapi.PathTools, nil, &tools); err != nil {
		t.Fatal(err)
	}
	for _, ts := range tools.Tools {
		if ts.Name == "Echo" {
			echo = ts
		}
	}
	if echo.Exposed || echo.Approval != "ask" || echo.Override == nil {
		t.Errorf("Echo after reload: %+v", echo)
	}
	// A new node with the same state directory (a restart) starts with it.
	n2, err := New(h.cfg, h.node.log, WithGetenv(noEnv(t)), WithTools(toolhost.NewEchoTool()))
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range n2.Tools() {
		if ti.Spec.Name == "Echo" && ti.Exposure.Exposed {
			t.Errorf("a restarted node exposes Echo: %+v", ti.Exposure)
		}
	}

	// Reset: the config file's value again, and the registration with it.
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Echo/override", controlapi.ToolOverrideRequest{Reset: true}, &res); err != nil {
		t.Fatal(err)
	}
	<-second.Done()
	if got, _ := registered(t, h, h.accept()); strings.Join(got, ",") != "Echo" {
		t.Errorf("registered after reset: %v", got)
	}
}
