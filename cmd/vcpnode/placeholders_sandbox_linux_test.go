//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestPlaceholdersLocalProtectsTheConfig: under `placeholders --local`, a
// command whose profile grants the config's folder reads a file beside the
// config but not the config itself (it holds the hub key), as under the
// daemon.
func TestPlaceholdersLocalProtectsTheConfig(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	dir := t.TempDir()
	if strings.ContainsAny(dir, " '\"$\\`") {
		t.Skipf("temporary directory %q would need shell quoting", dir)
	}
	beside := filepath.Join(dir, "beside.txt")
	if err := os.WriteFile(beside, []byte("BESIDE"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c.toml")
	doc := `[hub]
key = "config-secret-key"

[sandbox.profiles.reader]
extends = "default"
read = ["` + dir + `"]

[[placeholders.command]]
name = "Beside"
command = "cat ` + beside + `"
sandbox = "reader"

[[placeholders.command]]
name = "Config"
command = "cat ` + path + `"
sandbox = "reader"
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ta := newTestApp(t)
	if code := ta.run("placeholders", "--local", "--config", path, "--json"); code != exitOK {
		t.Fatalf("exit code %d; stdout %q stderr %q", code, ta.stdout, ta.stderr)
	}
	var resp controlapi.PlaceholdersResponse
	if err := json.Unmarshal([]byte(ta.stdout.String()), &resp); err != nil {
		t.Fatalf("output %q: %v", ta.stdout, err)
	}
	got := map[string]controlapi.PlaceholderStatus{}
	for _, p := range resp.Placeholders {
		got[p.Key] = p
	}
	if p := got["{{Beside}}"]; p.Value != "BESIDE" {
		t.Errorf("the profile's grant was not applied: %+v", p)
	}
	p := got["{{Config}}"]
	if p.HasValue || strings.Contains(ta.stdout.String(), "config-secret-key") || strings.Contains(ta.stderr.String(), "config-secret-key") {
		t.Errorf("a placeholder command read the config file: %+v", p)
	}
	if want := `placeholder command "Config" was refused by the node's sandbox (profile "reader")`; !strings.Contains(p.LastError, want) {
		t.Errorf("the error lacks %q: %q", want, p.LastError)
	}
}
