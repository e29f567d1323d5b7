package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestAuditFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{newGateTool()}, config: func(c *config.Config) {
		c.Audit.File = path
		c.Tools = map[string]config.ToolConfig{"Gate": {Approval: "deny"}}
	}})
	conn := h.accept()
	h.call(conn, "Echo", map[string]any{"message": argSecret})
	h.call(conn, "Echo", map[string]any{"fail": "boom"})
	h.call(conn, "Gate", nil)
	h.call(conn, "Missing", nil)
	if o := h.node.CallLocal(h.ctx, "local-1", "NodeInfo", nil); !o.OK() {
		t.Fatalf("local call: %+v", o)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), argSecret) {
		t.Errorf("an argument value reached the audit file:\n%s", data)
	}
	entries := testlog.ReadJSONLines[events.AuditEntry](t, path)
	want := []struct {
		tool, outcome, approval, err string
		local                        bool
	}{
		{"Echo", "ok", "auto", "", false},
		{"Echo", "error", "auto", "boom", false},
		{"Gate", "refused", "refused", `tool "Gate" refused by the node's owner`, false},
		{"Missing", "unknown_tool", "", `unknown tool "Missing"`, false},
		{"NodeInfo", "ok", "auto", "", true},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d audit lines, want %d:\n%s", len(entries), len(want), data)
	}
	for i, w := range want {
		e := entries[i]
		if e.Tool != w.tool || e.Outcome != w.outcome || e.Approval != w.approval || e.Error != w.err || e.Local != w.local ||
			e.Node != "test-node" || e.RequestID == "" || e.Time.IsZero() || e.DurationMs < 0 {
			t.Errorf("audit line %d = %+v, want %+v", i, e, w)
		}
		if w.outcome == "ok" && e.ResultBytes == 0 {
			t.Errorf("audit line %d has no result size", i)
		}
	}
}

func TestAuditFileFollowsReloadAndRecovers(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl")
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Audit.File = first }})
	conn := h.accept()
	h.call(conn, "Echo", nil)

	// A path that cannot be written is noticed once, and the calls go on.
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(first, 0o700); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if res := h.call(conn, "Echo", nil); res.Status != wsproto.StatusSuccess {
			t.Fatalf("call with a broken audit file: %+v", res)
		}
	}
	if n := strings.Count(h.logs.String(), "cannot write the audit file"); n != 1 {
		t.Errorf("the audit failure was logged %d times, want once", n)
	}
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	h.call(conn, "Echo", nil)
	h.waitLog("audit file writable again")
	if got := len(testlog.ReadJSONLines[events.AuditEntry](t, first)); got != 1 {
		t.Errorf("%d lines after recovery, want 1", got)
	}

	cfg := h.node.Config()
	cfg.Audit.File = second
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	h.call(conn, "Echo", nil)
	if got := len(testlog.ReadJSONLines[events.AuditEntry](t, second)); got != 1 {
		t.Errorf("%d lines in the new audit file, want 1", got)
	}
}

func TestAuditFileThatCannotBeOpenedStopsNew(t *testing.T) {
	cfg := config.Default()
	cfg.Hub.Key = testKey
	cfg.Audit.File = filepath.Join(t.TempDir(), "missing-dir", "audit.jsonl")
	_, err := New(cfg, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "audit.file") {
		t.Fatalf("New = %v, want an audit.file error", err)
	}
}
