package node

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestSandboxDerivedGrantsShown: what a tool's process got beyond its
// profile from what it ran is listed next to the profile, in the tools'
// statuses (tools --all, the console) and the status's sandbox section,
// each grant saying where it comes from.
func TestSandboxDerivedGrantsShown(t *testing.T) {
	needCommands(t, "node")
	sandboxtest.NeedLandlock(t)
	tree := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(tree, "node_modules", "left-pad", "index.js"): "module.exports = (s) => s;\n",
		filepath.Join(tree, "modules", "fmt.js"):                    "module.exports = {};\n",
		filepath.Join(tree, "Plugin", "Diary", "plugin-manifest.json"): `{"name":"Diary","pluginType":"hybridservice",` +
			`"entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}}`,
		filepath.Join(tree, "Plugin", "Diary", "index.js"): diaryPlugin,
	})
	cfg := config.Default()
	cfg.Hub.URL, cfg.Hub.Key = "ws://127.0.0.1:1", testKey
	cfg.Plugins.Dirs = []string{filepath.Join(tree, "Plugin")}
	cfg.Plugins.StateDir = t.TempDir()
	n, err := New(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), WithGetenv(noEnv(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.CloseLocal)
	want := []controlapi.SandboxGrant{
		{Path: filepath.Join(tree, "modules"), From: sandbox.FromTreeModules},
		{Path: filepath.Join(tree, "node_modules"), From: sandbox.FromNodeModules},
	}
	i := slices.IndexFunc(n.ToolStatuses().Tools, func(ts controlapi.ToolStatus) bool { return ts.Name == "Diary" })
	if i < 0 {
		t.Fatalf("no Diary: %+v", n.ToolStatuses().Tools)
	}
	ts := n.ToolStatuses().Tools[i]
	for _, g := range want {
		if !slices.Contains(ts.SandboxGrants, g) {
			t.Errorf("Diary's grants lack %+v: %+v", g, ts.SandboxGrants)
		}
	}
	if ts.Sandbox != "default" {
		t.Errorf("profile %q", ts.Sandbox)
	}
	if got := n.Status().Sandbox.Derived["Diary"]; !slices.Equal(got, ts.SandboxGrants) {
		t.Errorf("status's derived grants of Diary: %+v, want %+v", got, ts.SandboxGrants)
	}
}
