package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
)

func TestConfigCheckOK(t *testing.T) {
	keyFile := writeFile(t, "key", "good-key\n", 0o600)
	path := writeFile(t, "c.toml", "[hub]\nurl = \"wss://vcp.example.org\"\nkey_file = \""+keyFile+"\"\n", 0o644)
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitOK {
		t.Fatalf("exit code %d; stdout %q stderr %q", code, ta.stdout, ta.stderr)
	}
	if got := ta.stdout.String(); got != "config OK\n" {
		t.Errorf("stdout = %q, want only \"config OK\"", got)
	}
}

func TestConfigCheckListsEveryProblem(t *testing.T) {
	path := writeFile(t, "c.toml", `[hub]
url = "ftp://h"
kye = "x"
[node]
queue = -1
`, 0o600)
	ta := newTestApp(t)
	ta.env[config.EnvKey] = "good-key" // the file's problems alone
	if code := ta.run("config", "check", "-c", path); code != exitError {
		t.Fatalf("exit code %d, want %d", code, exitError)
	}
	want := path + `:2:1: hub.url: scheme "ftp" is not supported: use ws://, wss://, http:// or https://` + "\n" +
		path + `:3:1: hub.kye: unknown key (did you mean "key"?)` + "\n" +
		path + ":5:1: node.queue: must be 0 or more (got -1)\n"
	if got := ta.stdout.String(); got != want {
		t.Errorf("stdout =\n%s\nwant\n%s", got, want)
	}
	if got := ta.stderr.String(); got != "vcpnode: "+path+": 3 problems\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestConfigCheckSyntaxError(t *testing.T) {
	path := writeFile(t, "c.toml", "[hub]\nurl = \"ws://h\n", 0o600)
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitError {
		t.Fatalf("exit code %d", code)
	}
	want := path + ":2:14: basic strings cannot have new lines\n" +
		"not checked: the key, the [control] group, the sandbox on this machine, the plugin folders, the [tools.NAME] names and approval windows: the file does not parse\n"
	if got := ta.stdout.String(); got != want {
		t.Errorf("stdout = %q, want a line:col for the unterminated string and what was not checked", got)
	}
}

// TestConfigCheckNeverShowsTheKey feeds bad keys through every source.
func TestConfigCheckNeverShowsTheKey(t *testing.T) {
	const secret = "s3cr3t key%with/bad?chars"
	badKeyFile := writeFile(t, "key", secret+"\n", 0o600)
	tests := []struct {
		name, doc string
		env       map[string]string
		want      string
	}{
		{"inline", "[hub]\nkey = \"" + secret + "\"\n", nil, "hub.key: the key contains whitespace"},
		{"key file", "[hub]\nkey_file = \"" + badKeyFile + "\"\n", nil, "invalid hub key: the key contains whitespace"},
		{"environment", "", map[string]string{config.EnvKey: secret}, config.EnvKey + ": invalid hub key"},
		{"pasted in the url", "[hub]\nurl = \"ws://h/vcp-distributed-server/VCP_Key=s3cr3t\"\n", nil, "give only the server's base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.doc, 0o600)
			ta := newTestApp(t)
			for k, v := range tt.env {
				ta.env[k] = v
			}
			if code := ta.run("config", "check", "--config", path); code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			out := ta.stdout.String() + ta.stderr.String()
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			for _, part := range []string{secret, "s3cr3t", "bad?chars"} {
				if strings.Contains(out, part) {
					t.Errorf("output contains %q:\n%s", part, out)
				}
			}
		})
	}
}

func TestConfigCheckWarnings(t *testing.T) {
	readableKey := writeFile(t, "key", "good-key\n", 0o644)
	tests := []struct {
		name, doc string
		mode      os.FileMode
		want      []string
	}{
		{"key from the environment", "", 0o600, nil},
		{"key file readable", "[hub]\nkey_file = \"" + readableKey + "\"\n", 0o600,
			[]string{"warning: " + readableKey + " holds the key and is readable by its group and everyone (mode 0644): run chmod 600 " + readableKey}},
		{"inline key, config readable by the group", "[hub]\nkey = \"good-key\"\n", 0o640, []string{"holds the key and is readable by its group (mode 0640)"}},
		{"clear text", "[hub]\nurl = \"ws://192.0.2.7:6005\"\nkey = \"k\"\n", 0o600, []string{"warning: hub.url uses ws:// to a non-loopback host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "c.toml", tt.doc, tt.mode)
			ta := newTestApp(t)
			if tt.doc == "" {
				ta.env[config.EnvKey] = "good-key"
			}
			if code := ta.run("config", "check", "--config", path); code != exitOK {
				t.Fatalf("exit code %d; stdout %q stderr %q", code, ta.stdout, ta.stderr)
			}
			out := ta.stdout.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.HasSuffix(out, "config OK\n") {
				t.Errorf("stdout does not end with config OK:\n%s", out)
			}
		})
	}
}

func TestConfigCheckMissingFile(t *testing.T) {
	ta := newTestApp(t)
	missing := filepath.Join(t.TempDir(), "nope.toml")
	if code := ta.run("config", "check", "--config", missing); code != exitError {
		t.Fatalf("exit code %d", code)
	}
	if got := ta.stderr.String(); !strings.Contains(got, "vcpnode: read config: open "+missing+": no such file or directory") {
		t.Errorf("stderr = %q", got)
	}
}

func TestConfigShowRedactsAndRoundTrips(t *testing.T) {
	path := writeFile(t, "c.toml", `[hub]
key = "s3cr3t-key"
[node]
exposed_tools = ["A"]
[tools.A]
expose = true
timeout = "90s"
`, 0o600)
	ta := newTestApp(t)
	if code := ta.run("config", "show", "--config", path); code != exitOK {
		t.Fatalf("exit code %d; stderr %q", code, ta.stderr)
	}
	out := ta.stdout.String()
	if strings.Contains(out, "s3cr3t-key") {
		t.Fatalf("config show printed the key:\n%s", out)
	}
	back, err := config.Parse([]byte(out), "shown", toolconfig.Check)
	if err != nil {
		t.Fatalf("config show output does not load back: %v\n%s", err, out)
	}
	orig, err := config.Load(path, toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	want := orig.Redacted()
	if !strings.Contains(out, "mode = 'distributed'") {
		t.Errorf("config show leaves the unset [node] mode out instead of its default:\n%s", out)
	}
	want.Node.Mode = config.ModeDistributed
	// An absent list and an empty one mean the same; show writes [].
	for _, c := range []*config.Config{&back, &want} {
		c.Node.HiddenTools = append([]string{}, c.Node.HiddenTools...)
		c.Files.Roots = append([]string{}, c.Files.Roots...)
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, want)
	}
}

// An unset mode shows the one [observer] enabled puts in force, and the
// output still loads back.
func TestConfigShowMode(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"[hub]\nkey = \"k\"\n", "mode = 'distributed'"},
		{"[hub]\nkey = \"k\"\n[observer]\nenabled = true\n", "mode = 'both'"},
		{"[hub]\nkey = \"k\"\n[node]\nmode = \"observer\"\n", "mode = 'observer'"},
	} {
		ta := newTestApp(t)
		if code := ta.run("config", "show", "--config", writeFile(t, "c.toml", c.file, 0o600)); code != exitOK {
			t.Fatalf("exit %d: %s", code, ta.stderr)
		}
		out := ta.stdout.String()
		if !strings.Contains(out, "\n"+c.want+"\n") {
			t.Errorf("config show of %q lacks %q:\n%s", c.file, c.want, out)
		}
		if _, err := config.Parse([]byte(out), "shown", toolconfig.Check); err != nil {
			t.Errorf("config show of %q does not load back: %v", c.file, err)
		}
	}
}

// config check reports in one run what run would refuse, and the window
// of an "ask" tool that its own timeout would cut; a [tools.X] for no
// hosted tool is a warning listing the known ones.
func TestConfigCheckIsComplete(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	bad := writeFile(t, "c.toml", "[plugins]\ndirs = [\""+missing+"\"]\n[control]\ngroup = \"no-such-group-vcpnode\"\n", 0o600)
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", bad); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, want := range []string{"hub: no key is set", "plugins.dirs[0]: " + missing + ": no such file or directory", "control.group: no group \"no-such-group-vcpnode\"", "3 problems"} {
		if out := ta.stdout.String() + ta.stderr.String(); !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(ta.stdout.String(), "config OK") {
		t.Error("config OK despite the problems")
	}

	// UnitConverter's manifest says 10 s; the default 2 m window cannot fit.
	doc := "[hub]\nkey = \"k\"\n[plugins]\ndirs = [\"" + examples + "\"]\n" +
		"[tools.UnitConverter]\napproval = \"ask\"\n[tools.TextStats]\napproval = \"ask\"\napproval_timeout = \"5s\"\n[tools.Echo]\nexpose = true\n"
	ta = newTestApp(t)
	if code := ta.run("config", "check", "--config", writeFile(t, "c.toml", doc, 0o600)); code != exitError {
		t.Errorf("exit %d, want %d; stdout %s", code, exitError, ta.stdout)
	}
	out := ta.stdout.String()
	for _, want := range []string{
		"tools.UnitConverter.approval: approval_timeout (default) 2m is not below the tool's own timeout 10s (from its manifest): the call would time out before it could be approved",
		"warning: [tools.Echo] names no tool this node hosts (known: DelayedEcho, DirectoryTree, ReadFile, SearchFiles, SystemStatus, TextStats, UnitConverter, WriteFile, internal_request_file)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TextStats:") {
		t.Errorf("a window below the tool's timeout was reported:\n%s", out)
	}
}

// A file with problems is still checked as far as what decoded allows:
// the key, the plugin folders and the group are checked beside a wrong
// type and an unknown key, and a check whose input has a problem is named
// with the reason.
func TestConfigCheckGoesOnPastTheFilesProblems(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	path := writeFile(t, "c.toml", `[node]
max_concurrent = "8"
[hub]
kye = "x"
[plugins]
dirs = ["`+missing+`"]
[control]
group = "no-such-group-vcpnode"
`, 0o600)
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	want := path + `:2:18: node.max_concurrent: wrong type: expected an integer, got a TOML string` + "\n" +
		path + `:4:1: hub.kye: unknown key (did you mean "key"?)` + "\n" +
		path + `: hub: no key is set: put it in hub.key_file (or hub.key), or set VCPNODE_KEY; the node cannot start without one` + "\n" +
		path + `: control.group: no group "no-such-group-vcpnode" on this machine` + "\n" +
		path + `: plugins.dirs[0]: ` + missing + `: no such file or directory` + "\n" +
		`not checked: the [tools.NAME] names and the approval windows against the plugins' own timeouts: a plugin folder is missing (above)` + "\n"
	if got := ta.stdout.String(); got != want {
		t.Errorf("stdout =\n%s\nwant\n%s", got, want)
	}
	if got := ta.stderr.String(); got != "vcpnode: "+path+": 5 problems\n" {
		t.Errorf("stderr = %q", got)
	}

	// Checks whose inputs have problems say so; the others still run: the
	// examples are read and [tools.Echo] is still found to name nothing.
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	path = writeFile(t, "c.toml", `[hub]
key_file = 5
[plugins]
dirs = ["`+examples+`"]
[control]
group = 7.5
[tools.Echo]
expose = true
[tools.UnitConverter]
approval_timeout = "soon"
`, 0o600)
	ta = newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	out := ta.stdout.String()
	for _, want := range []string{
		"warning: [tools.Echo] names no tool this node hosts (known: DelayedEcho,",
		path + ":2:12: hub.key_file: wrong type",
		path + ":6:1: control.group: wrong type",
		path + `:10:1: tools.UnitConverter.approval_timeout: invalid duration "soon"`,
		"not checked: the key: hub.key_file has a problem (above)\n",
		"not checked: the [control] group on this machine: control.group has a problem (above)\n",
		"not checked: tools.UnitConverter approval window against the tool's own timeout: tools.UnitConverter.approval_timeout has a problem (above)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no key is set") || strings.Contains(out, "no group") {
		t.Errorf("a check ran on a setting the file did not give:\n%s", out)
	}
	if got := ta.stderr.String(); got != "vcpnode: "+path+": 3 problems\n" {
		t.Errorf("stderr = %q", got)
	}
}

// config check reads the plugin folders as run does and warns of what run
// logs: a manifest it skips, a plugin dir that is one plugin's folder (with
// its parent to list instead), names in exposed_tools and hidden_tools
// that match no tool (with the closest one).
func TestConfigCheckReadsThePluginFoldersAsRunDoes(t *testing.T) {
	plugins := filepath.Join(t.TempDir(), "Plugin")
	for name, manifest := range map[string]string{
		"Broken": `{"name": "Broken", "pluginType": `,
		"Fine":   `{"name":"Fine","pluginType":"synchronous","entryPoint":{"command":"sh run.sh"},"communication":{"protocol":"stdio"}}`,
	} {
		if err := os.MkdirAll(filepath.Join(plugins, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, name, "plugin-manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(dir string) string {
		t.Helper()
		doc := "[hub]\nkey = \"k\"\n[plugins]\ndirs = [\"" + dir + "\"]\n[node]\nexposed_tools = [\"Fien\"]\nhidden_tools = [\"NothingLikeIt\"]\n"
		ta := newTestApp(t)
		if code := ta.run("config", "check", "--config", writeFile(t, "c.toml", doc, 0o600)); code != exitOK {
			t.Errorf("exit %d, want %d (warnings only); stderr %s", code, exitOK, ta.stderr)
		}
		return ta.stdout.String()
	}
	out := check(plugins)
	for _, want := range []string{
		"warning: plugin skipped: " + filepath.Join(plugins, "Broken", "plugin-manifest.json"),
		`warning: node.exposed_tools: "Fien" names no tool this node hosts (did you mean "Fine"?); a non-empty exposed_tools hides every tool it does not name`,
		`warning: node.hidden_tools: "NothingLikeIt" names no tool this node hosts (known: DirectoryTree, Fine, ReadFile,`,
		"config OK",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	fine := filepath.Join(plugins, "Fine")
	out = check(fine)
	want := "warning: plugin dir " + fine + " holds a plugin-manifest.json itself: it is one plugin's folder, and a plugin dir holds plugin folders; list its parent, " + plugins + ", instead"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
}
