package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

func TestPlaceholdersOneShot(t *testing.T) {
	path := writeFile(t, "c.toml", `
[placeholders.values]
DevBoxOwner = "Alice"

[[placeholders.command]]
name = "Branch"
command = "printf 'main\\n'"

[[placeholders.command]]
name = "Broken"
command = "echo 'not a git repository' >&2; exit 128"
timeout = "5s"

[[placeholders.command]]
name = "Long"
command = "printf '%0200d' 0"
`, 0o600)
	ta := newTestApp(t)
	if code := ta.run("placeholders", "--local", "--config", path); code != exitOK {
		t.Fatalf("exit code %d; stdout %q stderr %q", code, ta.stdout, ta.stderr)
	}
	lines := strings.Split(strings.TrimSpace(ta.stdout.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "KEY") {
		t.Fatalf("output:\n%s", ta.stdout)
	}
	wants := [][]string{
		{"{{Branch}}", "main", "command Branch"},
		{"{{Broken}}", "(none yet)", "command Broken", "exited with status 128: not a git repository"},
		{"{{DevBoxOwner}}", "Alice", "value DevBoxOwner"},
		{"{{Long}}", strings.Repeat("0", 47) + "…", "command Long"},
	}
	for i, want := range wants {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}

	ta = newTestApp(t)
	if code := ta.run("placeholders", "--local", "--config", path, "--json"); code != exitOK {
		t.Fatalf("--json: exit code %d; stderr %q", code, ta.stderr)
	}
	var resp controlapi.PlaceholdersResponse
	if err := json.Unmarshal([]byte(ta.stdout.String()), &resp); err != nil || len(resp.Placeholders) != 4 {
		t.Fatalf("--json output %q: %v", ta.stdout, err)
	}
	if p := resp.Placeholders[3]; p.Key != "{{Long}}" || len(p.Value) != 200 || p.UpdatedAt == nil || time.Since(*p.UpdatedAt) > time.Minute {
		t.Errorf("--json keeps the whole value: %+v", p)
	}
}

func TestPlaceholdersConfigProblem(t *testing.T) {
	path := writeFile(t, "c.toml", "[placeholders.values]\nA = \"1\"\n\"{{A}}\" = \"2\"\n", 0o600)
	ta := newTestApp(t)
	if code := ta.run("placeholders", "--local", "--config", path); code == exitOK {
		t.Fatalf("a conflicting config was accepted: %q", ta.stdout)
	}
	if !strings.Contains(ta.stderr.String(), "already defined by placeholders.values.A") {
		t.Errorf("stderr = %q", ta.stderr)
	}
}

func TestPlaceholdersDaemonNotRunning(t *testing.T) {
	ta := newTestApp(t)
	socket := filepath.Join(t.TempDir(), "none.sock")
	if code := ta.run("placeholders", "--socket", socket); code == exitOK {
		t.Fatal("succeeded without a daemon")
	}
	if got := ta.stderr.String(); !strings.Contains(got, "is it running?") || !strings.Contains(got, "--local") {
		t.Errorf("stderr = %q", got)
	}
}

func TestPrintPlaceholdersWithSources(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	updated, next := now.Add(-90*time.Second), now.Add(30*time.Second)
	resp := controlapi.PlaceholdersResponse{
		Now: now,
		Placeholders: []controlapi.PlaceholderStatus{
			{Key: "{{Weather}}", Value: "sunny\nand warm", HasValue: true, Source: "plugin Weather", UpdatedAt: &updated},
		},
		Sources: []controlapi.PlaceholderSourceStatus{
			{Name: "plugin Weather", Runs: 4, SkippedBusy: 2, SkippedTooSoon: 1, NextRun: &next},
			{Name: "command Slow", Runs: 1, Running: true},
		},
	}
	var out bytes.Buffer
	if err := printPlaceholders(&out, resp); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sunny and warm", "1m30s", "plugin Weather  4     2             1                 in 30s", "running now"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
