package node

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestReloadWithABadConfigKeepsTheOldOne(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	bad := h.cfg
	bad.Node.MaxConcurrent = 0
	bad.Hub.URL = "ftp://example"
	if _, err := h.node.Reload(bad); err == nil || !strings.Contains(err.Error(), "old one stays in force") {
		t.Fatalf("Reload(bad) = %v", err)
	}
	if got := h.node.Config(); got.Hub.URL != h.cfg.Hub.URL {
		t.Errorf("config after a failed reload: url %q", got.Hub.URL)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "unchanged"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after a failed reload: %+v", res)
	}
	if s, _ := h.node.State(); s.Sessions != 1 {
		t.Errorf("a failed reload reconnected (sessions %d)", s.Sessions)
	}
}

func TestReloadThatChangesToolsReconnects(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	first := h.accept()
	if _, err := first.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	cfg := h.cfg
	cfg.Node.ExposedTools = append(slices.Clone(cfg.Node.ExposedTools), "NodeInfo")
	rep, err := h.node.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Reconnected || !slices.Contains(rep.Changed, "node") {
		t.Errorf("report = %+v", rep)
	}
	second := h.accept()
	msg, err := second.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, msg.(wsproto.RegisterTools)); !slices.Equal(got, []string{"Echo", "NodeInfo"}) {
		t.Errorf("tools after reload = %v", got)
	}
	<-first.Done()
	if err := first.Err(); err == nil || !strings.Contains(err.Error(), "1001") {
		t.Errorf("first connection ended with %v, want a close frame", err)
	}
	if res := h.call(second, "NodeInfo", nil); res.Status != wsproto.StatusSuccess {
		t.Fatalf("newly exposed tool: %+v", res)
	}
}

func TestReloadOfFileRootsNeedsNoReconnect(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("from the new root"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := h.cfg
	cfg.Files.Roots = []string{root}
	rep, err := h.node.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reconnected || !slices.Equal(rep.Changed, []string{"files"}) {
		t.Errorf("report = %+v, want only files changed and no reconnect", rep)
	}
	u := (&url.URL{Scheme: "file", Path: filepath.Join(root, "a.txt")}).String()
	if res := h.call(c, files.ToolName, map[string]any{"fileUrl": u}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("file from the reloaded root: %+v", res)
	}
	if s, _ := h.node.State(); s.Sessions != 1 {
		t.Errorf("sessions = %d, want 1", s.Sessions)
	}
}

func TestCallLocalSkipsOnlyTheExposurePolicy(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.MaxResultBytes, c.Node.Oversize = 2*config.KiB, "error" }})
	h.accept()
	o := h.node.CallLocal(h.ctx, "local-1", "NodeInfo", nil) // not exposed to the server
	if !o.OK() || !json.Valid(o.Result) {
		t.Fatalf("local call of a hidden tool = %+v", o)
	}
	big, _ := json.Marshal(strings.Repeat("x", 4*config.KiB))
	o = h.node.CallLocal(h.ctx, "local-2", "Echo", map[string]json.RawMessage{"text": big})
	if o.OK() || !strings.Contains(o.Err, "max_result_bytes") {
		t.Errorf("local call past the result cap = %+v", o)
	}
	if o := h.node.CallLocal(h.ctx, "local-3", "Nope", nil); o.OK() {
		t.Errorf("unknown tool called locally: %+v", o)
	}
}

// Tools given with WithTools (the demo's, tools/rsscheck's) are part of
// every registry a reload or a rescan builds, not only the first.
func TestWithToolsSurviveReloadAndRescan(t *testing.T) {
	extra := namedTool{"InProcess"}
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{extra}, config: func(c *config.Config) {
		c.Node.ExposedTools = []string{"Echo", "InProcess"}
	}})
	c := h.accept()
	// Registered: from here a reload that changes the tools reconnects
	// (one before is served by the registration itself).
	h.waitState("registered", func(s ConnState) bool { return s.Phase == PhaseConnected && s.Registered })
	cfg := h.cfg
	cfg.Node.ExposedTools = []string{"InProcess"}
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Rescan(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range h.node.Tools() {
		names = append(names, ti.Spec.Name)
	}
	for _, want := range []string{"Echo", "NodeInfo", "InProcess"} {
		if !slices.Contains(names, want) {
			t.Errorf("after a reload and a rescan, %s is gone: %v", want, names)
		}
	}
	c = h.accept() // the exposed set changed: the node reconnects
	if names := toolNames(t, mustRegister(t, h, c)); !slices.Equal(names, []string{"InProcess"}) {
		t.Errorf("registered %v, want [InProcess]", names)
	}
	if res := h.call(c, "InProcess", nil); res.Status != wsproto.StatusSuccess || firstText(t, res) != "ok" {
		t.Errorf("InProcess after reload: %+v", res)
	}
	if o := h.node.CallLocal(h.ctx, "l-1", "Echo", nil); !o.OK() {
		t.Errorf("Echo (hidden now) locally after reload: %+v", o)
	}
}

func mustRegister(t *testing.T, h *harness, c *demohub.Conn) wsproto.RegisterTools {
	t.Helper()
	msg, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	return msg.(wsproto.RegisterTools)
}
