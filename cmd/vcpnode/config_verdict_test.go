package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
)

// One rule, one verdict: an "ask" window the plugin's own timeout cuts
// short is refused by config check, run and reload in the same words, and
// a [tools.NAME] that names no tool, or a commands table that never
// applies, is a warning in all three (printed by config check and reload,
// logged by run), with the closest name.
func TestConfigCheckRunAndReloadGiveOneVerdict(t *testing.T) {
	plugins := writePlugins(t, map[string]string{
		"Weather": `{"name":"Weather","pluginType":"synchronous","entryPoint":{"command":"echo {}"},"communication":{"protocol":"stdio","timeout":5000}}`,
	})
	pluginsTable := "[plugins]\ndirs = [\"" + plugins + "\"]\nstate_dir = \"" + t.TempDir() + "\"\nwatch = false\n"
	const ask = "[tools.Weather]\napproval = \"ask\"\n"
	const typo = "[tools.Wether]\nexpose = true\n[tools.Weather.commands.Now]\napproval = \"deny\"\n"
	const refusal = "tools.Weather.approval: approval_timeout (default) 2m is not below the tool's own timeout 5s (from its manifest): the call would time out before it could be approved"
	const warning = `[tools.Wether] names no tool this node hosts (did you mean "Weather"?)`
	const commandWarning = "tools.Weather.commands.Now: Weather has a single command, which every call runs: set [tools.Weather] approval instead"
	doc := func(extra string) string {
		return "[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"verdict-key\"\n" + pluginsTable + extra
	}

	check := func(extra string) (int, string) {
		ta := newTestApp(t)
		ta.env["HOME"] = t.TempDir()
		code := ta.run("config", "check", "--config", writeFile(t, "config.toml", doc(extra), 0o600))
		return code, ta.stdout.String()
	}
	if code, out := check(ask); code != exitError || !strings.Contains(out, refusal) {
		t.Errorf("config check: exit %d, want %d with %q:\n%s", code, exitError, refusal, out)
	}
	if code, out := check(typo); code != exitOK || !strings.Contains(out, "warning: "+warning) || !strings.Contains(out, commandWarning) {
		t.Errorf("config check: exit %d, want %d with the warning %q:\n%s", code, exitOK, warning, out)
	}

	run := newTestApp(t)
	run.env["HOME"] = t.TempDir()
	run.app.newNode = func(cfg config.Config, log zerolog.Logger, opts ...node.Option) (nodeRunner, error) {
		return node.New(cfg, log, opts...)
	}
	if code := run.run("run", "--config", writeFile(t, "config.toml", doc(ask), 0o600), "--socket", filepath.Join(t.TempDir(), "s.sock")); code != exitError || !strings.Contains(run.stderr.String(), refusal) {
		t.Errorf("run: exit %d, want %d with %q:\n%s", code, exitError, refusal, run.stderr)
	}

	d := startDaemon(t, pluginsTable)
	d.accept()
	path := d.configFile()
	rewrite := func(extra string) {
		if err := os.WriteFile(path, []byte(testHubConfig(d.hub, pluginsTable+extra)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(ask)
	if code, _, errOut := d.ctl("reload"); code != exitError || !strings.Contains(errOut, refusal) || !strings.Contains(errOut, "the old one stays in force") {
		t.Errorf("reload: exit %d, want %d with %q:\n%s", code, exitError, refusal, errOut)
	}
	rewrite(typo)
	if code, out, errOut := d.ctl("reload"); code != exitOK || !strings.Contains(out, warning) || !strings.Contains(out, commandWarning) {
		t.Errorf("reload: exit %d, want %d with the warning %q:\n%s%s", code, exitOK, warning, out, errOut)
	}
	if !strings.Contains(d.logs.String(), `[tools.Wether] names no tool this node hosts (did you mean \"Weather\"?)`) {
		t.Errorf("the node did not log the warning:\n%s", d.logs.String())
	}
}
