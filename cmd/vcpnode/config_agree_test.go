package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

// writePlugins writes one folder per plugin: its manifest and, for a
// direct plugin, its script.
func writePlugins(t *testing.T, manifests map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Plugin")
	for name, m := range manifests {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"plugin-manifest.json": m, "index.js": "module.exports = { processToolCall: async () => 1 };\n"}
		for f, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestConfigCheckAgreesWithRun: every config `run` refuses for its tool
// set, `config check` refuses with the same words, both sources named.
func TestConfigCheckAgreesWithRun(t *testing.T) {
	plugins := writePlugins(t, map[string]string{
		"Weather": `{"name":"Weather","pluginType":"synchronous","entryPoint":{"command":"echo {}"},"communication":{"protocol":"stdio","timeout":5000}}`,
		"Greeter": `{"name":"Greeter","pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct","timeout":10000}}`,
	})
	server := func(name, tool string) string {
		return fmt.Sprintf("[mcp.servers.%s]\ncommand = \"/nonexistent/mcp-server\"\ntool = %q\n", name, tool)
	}
	cases := []struct {
		name, extra string
		sources     []string // both named in the refusal
	}{
		{"MCP server and plugin", server("weather", "Weather"), []string{"mcp:weather", "Weather"}},
		{"MCP server and built-in", server("files", "ReadFile"), []string{"mcp:files", "builtin"}},
		{"MCP server and file tool", server("files", files.ToolName), []string{"mcp:files", files.ToolName}},
		{"MCP server and direct plugin", server("greet", "Greeter"), []string{"mcp:greet", "Greeter"}},
		// The file's own check finds this one: said once, in the file's words.
		{"two MCP servers", server("a", "Same") + server("b", "Same"), []string{`mcp.servers.b.tool: "Same" is already the tool of mcp.servers.a`}},
	}
	dupe := regexp.MustCompile(`register tools: .*|mcp\.servers\.b\.tool: .*`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := fmt.Sprintf("[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"agree-key\"\n[plugins]\ndirs = [%q]\nstate_dir = %q\nwatch = false\n%s",
				plugins, t.TempDir(), c.extra)
			path := writeFile(t, "config.toml", doc, 0o600)

			check := newTestApp(t)
			check.env["HOME"] = t.TempDir()
			if code := check.run("config", "check", "--config", path); code != exitError {
				t.Fatalf("config check: exit %d, want %d\nstdout %s\nstderr %s", code, exitError, check.stdout, check.stderr)
			}
			checkSaid := dupe.FindString(check.stdout.String())

			run := newTestApp(t)
			run.env["HOME"] = t.TempDir()
			run.app.newNode = func(cfg config.Config, log zerolog.Logger, opts ...node.Option) (nodeRunner, error) {
				return node.New(cfg, log, opts...)
			}
			if code := run.run("run", "--config", path, "--socket", filepath.Join(t.TempDir(), "s.sock")); code != exitError {
				t.Fatalf("run: exit %d, want %d\nstderr %s", code, exitError, run.stderr)
			}
			runSaid := dupe.FindString(run.stderr.String())

			if strings.Count(check.stdout.String(), "already") != 1 {
				t.Errorf("config check gave the refusal more or less than once:\n%s", check.stdout)
			}
			if checkSaid == "" || checkSaid != runSaid {
				t.Fatalf("config check and run disagree:\nconfig check: %q\nrun:          %q\n(check stdout %s)", checkSaid, runSaid, check.stdout)
			}
			for _, s := range c.sources {
				if !strings.Contains(checkSaid, s) {
					t.Errorf("the refusal %q does not name %q", checkSaid, s)
				}
			}
		})
	}
}
