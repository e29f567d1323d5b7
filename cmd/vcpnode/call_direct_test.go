package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallAndToolsWithDirectPlugins: `vcpnode call` runs a Node.js direct
// plugin (its thrown error becomes the tool error), and `tools --all` says
// why the ones that cannot run are not tools.
func TestCallAndToolsWithDirectPlugins(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: this test runs real Node.js direct plugins")
	}
	dir := filepath.Join(t.TempDir(), "Plugin")
	direct := `"communication":{"protocol":"direct","timeout":10000}`
	plugins := map[string][2]string{
		"Greeter": {`{"name":"Greeter","pluginType":"hybridservice","entryPoint":{"script":"index.js"},` + direct + `}`,
			"module.exports = { async processToolCall(a) { if (a.fail) throw new Error('refused: ' + a.fail); return 'hello ' + a.who; } };\n"},
		"NeedsServer": {`{"name":"NeedsServer","pluginType":"hybridservice","entryPoint":{"script":"index.js"},` + direct + `}`,
			"require('../../modules/logger.js');\nmodule.exports = { processToolCall: async () => 1 };\n"},
		"Web": {`{"name":"Web","pluginType":"service","entryPoint":{"script":"index.js"},` + direct + `}`,
			"module.exports = { registerRoutes(app) {} };\n"},
	}
	for folder, p := range plugins {
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"plugin-manifest.json": p[0], "index.js": p[1]} {
			if err := os.WriteFile(filepath.Join(dir, folder, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := startDaemon(t, fmt.Sprintf("[plugins]\ndirs = [%q]\nstate_dir = %q\nwatch = false\n", dir, t.TempDir()))

	code, out, errOut := d.ctl("call", "Greeter", "who=owner")
	if code != exitOK {
		t.Fatalf("call: exit %d\n%s", code, errOut)
	}
	var res struct{ Content []struct{ Text string } }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "hello owner" {
		t.Errorf("call printed %q (%v)", out, err)
	}
	code, _, errOut = d.ctl("call", "Greeter", "fail=no")
	if code != exitError || !strings.Contains(errOut, "refused: no") {
		t.Errorf("failing call: exit %d, stderr %q", code, errOut)
	}

	code, out, errOut = d.ctl("tools", "--all")
	if code != exitOK {
		t.Fatalf("tools --all: exit %d\n%s", code, errOut)
	}
	squeezed := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Greeter no", "NeedsServer unsupported", "Web unsupported"} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("tools --all lacks %q:\n%s", want, out)
		}
	}
	var tools struct {
		Tools []struct{ Name, Reason, Skipped string }
	}
	d.ctlJSON(&tools, "tools", "--all")
	reasons := map[string]string{}
	for _, tl := range tools.Tools {
		reasons[tl.Name] = tl.Reason
	}
	if r := reasons["NeedsServer"]; !strings.Contains(r, "Cannot find module") || !strings.Contains(r, "modules/logger.js") {
		t.Errorf("NeedsServer reason %q", r)
	}
	if r := reasons["Web"]; !strings.Contains(r, "registerRoutes") {
		t.Errorf("Web reason %q", r)
	}
}
