package feed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
)

// staticPluginDir writes VCP static plugin folders as the official node
// would run them and returns the Plugin directory.
func staticPluginDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Plugin")
	fold := `{"vcp_dynamic_fold":true,"plugin_description":"tools","fold_blocks":[{"threshold":0.0,"content":"x"}]}`
	plugins := map[string]struct{ manifest, script string }{
		"Weather": {`{"name":"Weather","pluginType":"static","entryPoint":{"command":"sh run.sh"},
			"communication":{"protocol":"stdio","timeout":5000},"refreshIntervalCron":"*/10 * * * * *",
			"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Weather}}"},{"placeholder":"{{Wind}}"}]}}`,
			`echo '{"Weather":"sunny","{{Wind}}":"5 km/h"}'`},
		"Fold": {`{"name":"Fold","pluginType":"static","entryPoint":{"command":"sh run.sh"},
			"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{ToolBox}}"}]}}`,
			"echo '" + fold + "'"},
		"SideEffect": {`{"name":"SideEffect","pluginType":"static","entryPoint":{"command":"sh run.sh"}}`,
			`[ -t 0 ] || cat > stdin.txt; touch ran`},
		"BadCron": {`{"name":"BadCron","pluginType":"static","entryPoint":{"command":"sh run.sh"},"refreshIntervalCron":"every day",
			"capabilities":{"systemPromptPlaceholders":[{"placeholder":"Bad"}]}}`,
			`echo still-runs-once`},
	}
	for name, p := range plugins {
		folder := filepath.Join(dir, name)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, data := range map[string]string{"plugin-manifest.json": p.manifest, "run.sh": p.script + "\n"} {
			if err := os.WriteFile(filepath.Join(folder, file), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestEvaluateStaticPlugins(t *testing.T) {
	dir := staticPluginDir(t)
	cfg := config.Default()
	cfg.Plugins.Dirs = []string{dir}
	resp, warnings, err := Evaluate(context.Background(), cfg, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"BadCron"`) || !strings.Contains(warnings[0], "runs only at start") {
		t.Errorf("warnings = %q", warnings)
	}
	got := map[string]string{}
	for _, p := range resp.Placeholders {
		got[p.Key] = p.Value + " | " + p.Source
	}
	want := map[string]string{
		// As the official node pushes it: "{{Wind}}" is spelled as the
		// manifest declares it and feeds its own placeholder; "Weather" is
		// not ("{{Weather}}"), so that placeholder gets the whole output.
		"{{Weather}}": `{"Weather":"sunny","{{Wind}}":"5 km/h"} | plugin Weather`,
		"{{Wind}}":    "5 km/h | plugin Weather",
		"{{ToolBox}}": `{"vcp_dynamic_fold":true,"plugin_description":"tools","fold_blocks":[{"threshold":0.0,"content":"x"}]} | plugin Fold`,
		"{{Bad}}":     "still-runs-once | plugin BadCron",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("placeholders = %v", got)
	}
	// The side-effect plugin ran, with stdin on /dev/null (empty, not a pipe left open).
	stdin, err := os.ReadFile(filepath.Join(dir, "SideEffect", "stdin.txt"))
	if _, errRan := os.Stat(filepath.Join(dir, "SideEffect", "ran")); errRan != nil || err != nil || len(stdin) != 0 {
		t.Errorf("side-effect plugin: ran %v, stdin %q (%v)", errRan, stdin, err)
	}
}

// A static plugin that answers {"status":"error",…} has failed: no value,
// and its error is shown where placeholders are listed.
func TestStaticPluginReportedError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Plugin")
	folder := filepath.Join(dir, "Broken")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"plugin-manifest.json": `{"name":"Broken","pluginType":"static","entryPoint":{"command":"sh run.sh"},
			"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Broken}}"}]}}`,
		"run.sh": `echo '{"status":"error","error":"API key missing"}'` + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Plugins.Dirs = []string{dir}
	resp, _, err := Evaluate(context.Background(), cfg, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Placeholders) != 1 {
		t.Fatalf("placeholders = %+v", resp.Placeholders)
	}
	p := resp.Placeholders[0]
	if p.HasValue || !strings.Contains(p.LastError, "the plugin reported an error: API key missing") {
		t.Errorf("{{Broken}} = %+v, want no value and the plugin's error", p)
	}
}
