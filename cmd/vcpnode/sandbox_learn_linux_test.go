package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestSandboxLearn: `vcpnode sandbox learn` on a plugin that reads a
// folder outside its own and writes another prints, without changing the
// config, the profile that grants both (learned over several runs); once
// that profile is saved, the call succeeds and nothing more is refused.
func TestSandboxLearn(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	dir, outside := t.TempDir(), t.TempDir()
	data, logs := filepath.Join(outside, "data"), filepath.Join(outside, "logs")
	writeFiles(t, map[string]string{
		filepath.Join(data, "city.txt"): "Lisbon\n",
		filepath.Join(logs, ".keep"):    "",
		filepath.Join(dir, "plugins", "Reader", "plugin-manifest.json"): `{"name":"Reader","pluginType":"synchronous",` +
			`"entryPoint":{"command":"sh read.sh"},"communication":{"protocol":"stdio","timeout":60000}}`,
		filepath.Join(dir, "plugins", "Reader", "read.sh"): fmt.Sprintf("city=$(cat %q) || exit 1\necho \"$city\" >> %q || exit 1\n"+
			"printf '{\"status\":\"success\",\"result\":\"%%s\"}' \"$city\"\n", filepath.Join(data, "city.txt"), filepath.Join(logs, "calls.log")),
	})
	cfgPath := filepath.Join(dir, "config.toml")
	doc := fmt.Sprintf("[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"test-key\"\n\n[plugins]\ndirs = [%q]\nstate_dir = %q\n",
		filepath.Join(dir, "plugins"), filepath.Join(dir, "state"))
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "Reader", "city=any")
	want := fmt.Sprintf("[sandbox.profiles.reader]\nextends = \"default\"\nread = [%q]\nwrite = [%q]\n\n[tools.Reader]\nsandbox = \"reader\"\n", data, logs)
	if code != 0 || !strings.Contains(out, "# the call succeeds with this profile (3 runs)") || !strings.HasSuffix(out, want) {
		t.Fatalf("learn: code %d, stdout:\n%s\nwant it to end with:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	for _, w := range []string{"run 1 was refused read " + filepath.Join(data, "city.txt"), "run 2 was refused write " + filepath.Join(logs, "calls.log")} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != doc {
		t.Errorf("learn changed the config:\n%s", b)
	}

	if err := os.WriteFile(cfgPath, []byte(doc+"\n"+out), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "Reader")
	if code != 0 || !strings.Contains(out, `under the profile "reader" was refused nothing`) || !strings.Contains(out, "Lisbon") {
		t.Errorf("with the learned profile saved: code %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestSandboxLearnMCPStart: `sandbox learn --mcp` on a server that reads a
// folder outside its own at start prints the profile that lets it start.
func TestSandboxLearnMCPStart(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	// The interpreter itself, not a version manager's shim that reads the
	// real home's files (this test's home is a fresh one).
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skip("python3 is not installed: the server is a Python script")
	}
	python := strings.TrimSpace(string(exe))
	dir, outside := t.TempDir(), t.TempDir()
	data := filepath.Join(outside, "data")
	server := `import json, sys
unit = open(` + strconv.Quote(filepath.Join(data, "unit.txt")) + `).read().strip()
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("id") is None:
        continue
    result = {"tools": [{"name": "unit", "description": "The unit.", "inputSchema": {"type": "object"}}]}
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "u", "version": "1"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n"); sys.stdout.flush()
`
	writeFiles(t, map[string]string{filepath.Join(data, "unit.txt"): "pears\n", filepath.Join(dir, "srv", "server.py"): server})
	cfgPath := filepath.Join(dir, "config.toml")
	doc := fmt.Sprintf("[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"test-key\"\n\n[plugins]\nstate_dir = %q\n\n"+
		"[mcp.servers.files]\ncommand = %q\nargs = [%q]\n", filepath.Join(dir, "state"), python, filepath.Join(dir, "srv", "server.py"))
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "--mcp", "files")
	want := fmt.Sprintf("[sandbox.profiles.files]\nextends = \"default\"\nread = [%q]\n\n[mcp.servers.files]\nsandbox = \"files\"\n", data)
	if code != 0 || !strings.Contains(out, "# the server's start succeeds with this profile (2 runs)") || !strings.HasSuffix(out, want) {
		t.Fatalf("learn --mcp: code %d, stdout:\n%s\nwant it to end with:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
}

// TestSandboxLearnNamesWhatNoGrantGives: learning a plugin that runs the
// real Chromium with its own sandbox grants nothing and names the flag
// that does without it.
func TestSandboxLearnNamesWhatNoGrantGives(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("no chromium on PATH: the real browser is what this test runs")
	}
	dir := t.TempDir()
	plugin := filepath.Join(dir, "plugins", "Shot")
	writeFiles(t, map[string]string{
		filepath.Join(plugin, "plugin-manifest.json"): `{"name":"Shot","pluginType":"synchronous",` +
			`"entryPoint":{"command":"sh shot.sh"},"communication":{"protocol":"stdio","timeout":60000}}`,
		filepath.Join(plugin, "page.html"): "<p>hi</p>\n",
		filepath.Join(plugin, "shot.sh"):   `exec chromium --headless --disable-gpu --user-data-dir="$TMPDIR/chromium" --dump-dom "file://$PWD/page.html"` + "\n",
	})
	cfgPath := filepath.Join(dir, "config.toml")
	doc := fmt.Sprintf("[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"test-key\"\n\n[plugins]\ndirs = [%q]\nstate_dir = %q\n",
		filepath.Join(dir, "plugins"), filepath.Join(dir, "state"))
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "Shot")
	if code != 1 || !strings.Contains(out, "was refused nothing a profile grants") || strings.Contains(out, "[sandbox.profiles") {
		t.Errorf("learn: code %d, stdout:\n%s\nwant exit 1 and no profile", code, out)
	}
	if !strings.Contains(errOut, `plugin "Shot" was refused Chromium's own sandbox`) || !strings.Contains(errOut, "start Chromium with --no-sandbox") {
		t.Errorf("stderr does not name Chromium's sandbox and its flag:\n%s", errOut)
	}
}

// TestSandboxLearnPlaceholderSources: `sandbox learn --placeholder` runs a
// placeholder command, or a static plugin, once as the refresher would and
// prints the profile that lets it read what it was refused, in the table
// the source's profile is named in; saved, the run is refused nothing.
func TestSandboxLearnPlaceholderSources(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	dir, outside := t.TempDir(), t.TempDir()
	data := filepath.Join(outside, "data")
	writeFiles(t, map[string]string{
		filepath.Join(data, "city.txt"): "Lisbon\n",
		filepath.Join(dir, "plugins", "Sky", "plugin-manifest.json"): `{"name":"Sky","pluginType":"static","entryPoint":{"command":"sh sky.sh"},` +
			`"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Sky}}"}]}}`,
		filepath.Join(dir, "plugins", "Sky", "sky.sh"): fmt.Sprintf("cat %q\n", filepath.Join(data, "city.txt")),
	})
	cfgPath := filepath.Join(dir, "config.toml")
	doc := fmt.Sprintf("[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"test-key\"\n\n[plugins]\ndirs = [%q]\nstate_dir = %q\n\n"+
		"[[placeholders.command]]\nname = \"City\"\ncommand = \"cat %s\"\n",
		filepath.Join(dir, "plugins"), filepath.Join(dir, "state"), filepath.Join(data, "city.txt"))
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, table string }{
		{"City", "[[placeholders.command]]\nname = \"City\"\nsandbox = \"city\"   # in this command's table\n"},
		{"Sky", "[tools.Sky]\nsandbox = \"sky\"\n"},
	} {
		code, out, errOut := vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "--placeholder", c.name)
		want := fmt.Sprintf("[sandbox.profiles.%s]\nextends = \"default\"\nread = [%q]\n\n%s", strings.ToLower(c.name), data, c.table)
		if code != 0 || !strings.Contains(out, "# the placeholder's run succeeds with this profile (2 runs)") || !strings.HasSuffix(out, want) {
			t.Errorf("learn --placeholder %s: code %d, stdout:\n%s\nwant it to end with:\n%s\nstderr:\n%s", c.name, code, out, want, errOut)
		}
		if !strings.Contains(errOut, "run 1 was refused read "+filepath.Join(data, "city.txt")) {
			t.Errorf("learn --placeholder %s: stderr:\n%s", c.name, errOut)
		}
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != doc {
		t.Errorf("learn changed the config:\n%s", b)
	}
	code, _, errOut := vcpnodeProc(t, dir, "sandbox", "learn", "-c", cfgPath, "--placeholder", "Nowhere")
	if code == 0 || !strings.Contains(errOut, `no [[placeholders.command]] or static plugin is named "Nowhere"`) {
		t.Errorf("learn --placeholder Nowhere: code %d, stderr:\n%s", code, errOut)
	}
}

// writeFiles writes each file (path → content), making its folders.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for path, body := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
