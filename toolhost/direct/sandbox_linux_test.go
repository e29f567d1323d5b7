package direct

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// readerPlugin reads the file it is asked for, or writes one in its folder,
// and reports its pid.
const readerPlugin = `const fs = require('fs');
module.exports = { async processToolCall(args) {
  if (args.mode === 'hog') { const held = []; for (let i = 0; i < 1024; i++) held.push(Buffer.alloc(1 << 20, 1)); return { held: held.length }; }
  if (args.mode === 'write') { fs.writeFileSync('written.txt', 'here'); return { pid: process.pid, wrote: true }; }
  return { pid: process.pid, text: fs.readFileSync(args.path, 'utf8') };
} };
`

// sandboxedHost is a direct plugin host whose plugin "Reader" runs under
// profile, with home as the user's home directory. It skips, saying why,
// where Landlock is missing.
func sandboxedHost(t *testing.T, profile, home string) (*Host, *sandbox.Sandbox) {
	t.Helper()
	needNode(t)
	trees := proctreetest.Manager(t, proctree.ModeAuto)
	profiles, err := sandbox.Resolve(map[string]sandbox.Spec{"small": {Extends: "default", Memory: "128MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Options{Profiles: profiles, Tools: map[string]string{"Reader": profile}, Home: home,
		TempDir: t.TempDir(), Trees: trees, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.NeedFiles(t, sb.Capabilities())
	return newTestHost(t, Options{ProcessTrees: trees, Sandbox: sb}), sb
}

// readerRoot writes the Reader plugin, with own.txt in its folder.
func readerRoot(t *testing.T) (root, dir string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "Plugin")
	dir = filepath.Join(root, "Reader")
	writeTestFile(t, filepath.Join(dir, "plugin-manifest.json"),
		`{"name":"Reader","pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}}`)
	writeTestFile(t, filepath.Join(dir, "index.js"), readerPlugin)
	writeTestFile(t, filepath.Join(dir, "own.txt"), "OWN-DATA")
	return root, dir
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxConfinesDirectHost: under default the Node.js host of a
// direct plugin reads and writes its plugin's folder but not a file in the
// home directory, and the refusal names the profile; under none the same
// read succeeds (what makes the first half able to fail). The hosts are
// gone after Close.
func TestSandboxConfinesDirectHost(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	writeTestFile(t, secret, "SECRET-KEY-MATERIAL")
	var pids []int
	for _, profile := range []string{"default", "none"} {
		t.Run(profile, func(t *testing.T) {
			h, sb := sandboxedHost(t, profile, home)
			root, dir := readerRoot(t)
			tool := findTool(t, h.Load(scanDirect(t, root), Settings{}), "Reader")
			if got := sb.ProfileFor("Reader"); got != profile {
				t.Fatalf("profile %q, want %q", got, profile)
			}
			own, err := invoke(nil, tool, map[string]string{"path": filepath.Join(dir, "own.txt")}, "")
			if err != nil || !strings.Contains(asJSON(t, own), "OWN-DATA") {
				t.Fatalf("reading its own folder: %v %v", asJSON(t, own), err)
			}
			var res struct{ Pid int }
			if err := json.Unmarshal(own.(json.RawMessage), &res); err != nil || res.Pid == 0 {
				t.Fatalf("no pid in %s: %v", asJSON(t, own), err)
			}
			// The pid of its PID namespace, where it runs in its folder.
			if host := proctreetest.HostPid(res.Pid, dir); host != 0 {
				res.Pid = host
			}
			pids = append(pids, res.Pid)
			if _, err := invoke(nil, tool, map[string]string{"mode": "write"}, ""); err != nil {
				t.Errorf("writing its own folder: %v", err)
			} else if readFile(filepath.Join(dir, "written.txt")) != "here" {
				t.Error("the plugin's write is not in its folder")
			}
			v, err := invoke(nil, tool, map[string]string{"path": secret}, "")
			switch profile {
			case "default":
				if err == nil {
					t.Fatalf("read the home directory under default: %s", asJSON(t, v))
				}
				for _, want := range []string{`plugin "Reader" was refused by the node's sandbox (profile "default"): read ` + secret, "EACCES",
					"[sandbox.profiles.reader]\nextends = \"default\"\nread = [", "[tools.Reader]\nsandbox = \"reader\"\n"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error lacks %q: %v", want, err)
					}
				}
				t.Logf("the error: %v", err)
			case "none":
				if err != nil || !strings.Contains(asJSON(t, v), "SECRET-KEY-MATERIAL") {
					t.Errorf("under none the read failed: %s %v", asJSON(t, v), err)
				}
			}
		})
	}
	// The subtests' cleanups closed their hosts.
	for _, pid := range pids {
		testwait.For(t, "the Node.js host to be gone", func() bool { return proctreetest.Gone(pid) })
	}
}

// TestSandboxProfileChangeReloadsDirectHost: a Load after the plugin's
// profile changed replaces its host, which then runs under the new one.
func TestSandboxProfileChangeReloadsDirectHost(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, "notes.txt")
	writeTestFile(t, secret, "NOTES")
	h, sb := sandboxedHost(t, "none", home)
	root, _ := readerRoot(t)
	plugins := scanDirect(t, root)
	tool := findTool(t, h.Load(plugins, Settings{}), "Reader")
	if _, err := invoke(nil, tool, map[string]string{"path": secret}, ""); err != nil {
		t.Fatalf("under none: %v", err)
	}
	started := h.Started()
	if err := sb.Update(sandbox.Options{Tools: map[string]string{"Reader": "default"}, Home: home,
		TempDir: t.TempDir(), Trees: h.trees, Log: zerolog.New(zerolog.NewTestWriter(t))}); err != nil {
		t.Fatal(err)
	}
	tool = findTool(t, h.Load(plugins, Settings{}), "Reader")
	if h.Started() != started+1 {
		t.Errorf("hosts started %d, want %d: the profile change did not restart the host", h.Started(), started+1)
	}
	if _, err := invoke(nil, tool, map[string]string{"path": secret}, ""); err == nil || !strings.Contains(err.Error(), `(profile "default")`) {
		t.Errorf("after the change to default: %v", err)
	}
}

// TestSandboxDirectHostAtItsMemoryLimit: a direct plugin that allocates
// past its profile's memory limit gets its Node.js host killed by the
// kernel; the call's error names the limit, and the host is started again.
func TestSandboxDirectHostAtItsMemoryLimit(t *testing.T) {
	h, sb := sandboxedHost(t, "small", t.TempDir())
	sandboxtest.NeedTreeMemoryLimit(t, sb.Capabilities())
	root, dir := readerRoot(t)
	tool := findTool(t, h.Load(scanDirect(t, root), Settings{}), "Reader")
	v, err := invoke(nil, tool, map[string]string{"mode": "hog"}, "")
	if err == nil {
		t.Fatalf("allocating 1 GiB under a 128 MiB limit succeeded: %s", asJSON(t, v))
	}
	t.Logf("the error: %v", err)
	for _, want := range []string{`plugin "Reader" reached a limit of its sandbox profile (profile "small")`, "memory limit 128MiB reached"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// The next host serves again.
	if v, err := invoke(nil, tool, map[string]string{"path": filepath.Join(dir, "own.txt")}, ""); err != nil || !strings.Contains(asJSON(t, v), "OWN-DATA") {
		t.Errorf("after the restart: %s %v", asJSON(t, v), err)
	}
}

// TestSandboxRefusedHostStartNamesPathAndFix: a direct plugin whose module
// requires a file of a sibling plugin does not load under default, and
// the reason it is unsupported names the refused file and the config that
// grants it; under a profile with that config it loads.
func TestSandboxRefusedHostStartNamesPathAndFix(t *testing.T) {
	home := t.TempDir()
	root, dir := readerRoot(t)
	shared := filepath.Join(root, "Shared", "lib.js")
	writeTestFile(t, shared, "module.exports = { word: 'shared' };\n")
	writeTestFile(t, filepath.Join(dir, "index.js"), "const lib = require('../Shared/lib.js');\n"+readerPlugin)
	h, _ := sandboxedHost(t, "default", home)
	l := h.Load(scanDirect(t, root), Settings{})
	reason := unsupportedReason(l, "Reader")
	for _, want := range []string{`plugin "Reader" was refused by the node's sandbox (profile "default"): read ` + shared,
		"[sandbox.profiles.reader]\nextends = \"default\"\nread = [\"" + filepath.Dir(shared) + "\"]\n\n[tools.Reader]\nsandbox = \"reader\"\n"} {
		if !strings.Contains(reason, want) {
			t.Errorf("the reason lacks %q:\n%s", want, reason)
		}
	}
	_ = h.Close(t.Context())

	profiles, err := sandbox.Resolve(map[string]sandbox.Spec{"reader": {Extends: "default", Read: []string{filepath.Dir(shared)}}})
	if err != nil {
		t.Fatal(err)
	}
	trees := proctreetest.Manager(t, proctree.ModeAuto)
	sb, err := sandbox.New(sandbox.Options{Profiles: profiles, Tools: map[string]string{"Reader": "reader"}, Home: home,
		TempDir: t.TempDir(), Trees: trees, Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	h = newTestHost(t, Options{ProcessTrees: trees, Sandbox: sb})
	findTool(t, h.Load(scanDirect(t, root), Settings{}), "Reader")
}
