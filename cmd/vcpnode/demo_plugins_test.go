package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/wsproto"
)

// useDemoPlugins points the demo at dir for one test.
func useDemoPlugins(t *testing.T, dir string) {
	t.Helper()
	old := demoPluginsDir
	demoPluginsDir = func() string { return dir }
	t.Cleanup(func() { demoPluginsDir = old })
}

func TestDemoWithTheExamplePlugins(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH; the example plugins need it")
	}
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	useDemoKey(t, "PluginDemoKey-4N2")
	useDemoPlugins(t, examples)
	// Python plugins start slowly on a loaded machine; the demo's own
	// limits are for people, not for a busy CI.
	demoSlack = 4
	t.Cleanup(func() { demoSlack = 1 })
	ta := newTestApp(t)
	if err := executeDemo(t, ta, "demo"); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, ta.stdout, ta.stderr)
	}
	stdout := ta.stdout.String()
	assertInOrder(t, stdout, []string{
		"  plugins " + examples + " (UnitConverter and DelayedEcho exposed)",
		"register_tools  serverName=demo-node tools=[DelayedEcho Echo NodeInfo UnitConverter]",
		"call 6 of 7: UnitConverter",
		`succeeded as expected: the text contains "10 km = 6.21371 mi"`,
		"call 7 of 7: DelayedEcho",
		`succeeded as expected: the text contains "{{VCP_ASYNC_RESULT::DelayedEcho::"`,
		"waiting for DelayedEcho's result",
		"hub ← node  plugin_callback_forward  serverName=demo-node DelayedEcho/",
		"  ok: the server can now fill {{VCP_ASYNC_RESULT::DelayedEcho::",
		"hello from a background task",
		"the node stopped cleanly",
		"7 calls: 5 succeeded, 2 failed as expected\n",
	})
	if strings.Contains(stdout, "/plugin-callback/") || strings.Contains(stdout, "PluginDemoKey-4N2") {
		t.Errorf("the demo shows the callback URL or the key:\n%s", stdout)
	}
	// The asynchronous plugin is given time to exit, so nothing is killed.
	if stderr := ta.stderr.String(); stderr != "" {
		t.Errorf("stderr should be empty at the default level:\n%s", stderr)
	}
}

func TestDemoWithoutPython(t *testing.T) {
	useDemoKey(t, "NoPythonDemoKey")
	useDemoPlugins(t, t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no python3 anywhere
	ta := newTestApp(t)
	if err := executeDemo(t, ta, "demo"); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s", err, ta.stdout)
	}
	if out := ta.stdout.String(); !strings.Contains(out, "not used: python3 is not on PATH") || !strings.Contains(out, "5 calls: 3 succeeded") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestFindExamplePlugins(t *testing.T) {
	t.Chdir(t.TempDir())
	if got := findExamplePlugins(); got != "" {
		t.Errorf("found %q in an empty directory", got)
	}
	if err := os.MkdirAll(filepath.Join("examples", "Plugin", "UnitConverter"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("examples", "Plugin", "UnitConverter", "plugin-manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs(filepath.Join("examples", "Plugin"))
	if got := findExamplePlugins(); got != want {
		t.Errorf("findExamplePlugins = %q, want %q", got, want)
	}
}

func TestDescribeCallback(t *testing.T) {
	tests := []struct {
		data, want string
	}{
		{`{"pluginName":"DelayedEcho","taskId":"t1","status":"Succeed","message":"x"}`, "serverName=n DelayedEcho/t1 status=Succeed (75 bytes)"},
		{`{"pluginName":1}`, "serverName=n 16 bytes of callback data"},
	}
	for _, tt := range tests {
		got := describeCallback(wsproto.PluginCallbackForward{ServerName: "n", CallbackData: json.RawMessage(tt.data)})
		if got != tt.want {
			t.Errorf("describeCallback(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
}
