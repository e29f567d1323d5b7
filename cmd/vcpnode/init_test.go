package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vcpnode "github.com/vcpnode/vcpnode"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/service"
	"github.com/vcpnode/vcpnode/toolconfig"
)

const initKey = "s3cret-Key_1"

// initTest runs `init` as a user whose home is a temporary directory. init
// writes where it is told; the host's fsRoot holds only what it looks at
// to tell whether a service could be installed (withSystemd).
func newInitTest(t *testing.T, euid int, stdin string) (*serviceTest, string) {
	t.Helper()
	st := newServiceTest(t, "linux", euid)
	st.h.stdin = strings.NewReader(stdin)
	home := t.TempDir()
	st.env["HOME"] = home
	return st, home
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestInitWritesAConfigThatPassesConfigCheck(t *testing.T) {
	st, home := newInitTest(t, 1000, initKey+"\n")
	st.withSystemd(t)
	out := st.mustRun(t, "init", "--hub", "ws://127.0.0.1:6005/", "--name", "build box", "--key-stdin")

	dir := filepath.Join(home, ".config", "vcpnode")
	cfgPath := filepath.Join(dir, "config.toml")
	key := filepath.Join(dir, "key")
	for _, want := range []string{"created directory " + dir + " (mode 0700)\n", "wrote the key to " + key + " (mode 0600)\n",
		"wrote " + cfgPath + " (mode 0600)\n", "config OK", "next: vcpnode service install --config " + cfgPath} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+st.stderr.String(), initKey) {
		t.Fatalf("init printed the key:\n%s", out)
	}
	if data, _ := os.ReadFile(key); string(data) != initKey+"\n" {
		t.Errorf("key file holds %q", data)
	}
	if m := mode(t, key); m != 0o600 {
		t.Errorf("key file mode %04o", m)
	}
	if m := mode(t, cfgPath); m != 0o600 {
		t.Errorf("config mode %04o", m)
	}
	if m := mode(t, filepath.Dir(cfgPath)); m != 0o700 {
		t.Errorf("config directory mode %04o", m)
	}

	// The config keeps the example's comments and loads with the values given.
	text, _ := os.ReadFile(cfgPath)
	if strings.Contains(string(text), initKey) {
		t.Error("the config holds the key")
	}
	if !strings.Contains(string(text), "## Base URL of the VCP main server") || !strings.HasPrefix(string(text), "## Written by `vcpnode init`") {
		t.Errorf("the config lost the example's comments:\n%s", text)
	}
	cfg, err := config.Load(cfgPath, toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hub.URL != "ws://127.0.0.1:6005/" || cfg.Hub.Name != "build box" || cfg.Hub.KeyFile != key {
		t.Errorf("hub = %+v", cfg.Hub)
	}
	if got, err := cfg.Key(func(string) string { return "" }); err != nil || got != initKey {
		t.Errorf("Key() = %v (matches: %v)", err, got == initKey)
	}

	// And `config check` agrees, with no warning.
	check := st.mustRun(t, "config", "check", "--config", cfgPath)
	if check != "config OK\n" {
		t.Errorf("config check:\n%s", check)
	}
}

func TestInitNeverOverwritesWithoutForce(t *testing.T) {
	st, home := newInitTest(t, 1000, initKey+"\n")
	cfgPath := filepath.Join(home, "c", "config.toml")
	st.mustRun(t, "init", "--hub", "ws://127.0.0.1:1", "--config", cfgPath)
	before, _ := os.ReadFile(cfgPath)

	st.h.stdin = strings.NewReader("other-key\n")
	if code := st.run("init", "--hub", "ws://127.0.0.1:2", "--config", cfgPath); code != exitError {
		t.Fatalf("second init: exit %d", code)
	}
	if !strings.Contains(st.stderr.String(), cfgPath+" exists and was left alone: pass --force") {
		t.Errorf("stderr = %q", st.stderr)
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Error("the config changed without --force")
	}

	// --force replaces both; the key file is rewritten with the new key.
	st.mustRun(t, "init", "--hub", "ws://127.0.0.1:2", "--config", cfgPath, "--force")
	cfg, err := config.Load(cfgPath, toolconfig.Check)
	if err != nil || cfg.Hub.URL != "ws://127.0.0.1:2" {
		t.Fatalf("after --force: %v %q", err, cfg.Hub.URL)
	}
	if data, _ := os.ReadFile(filepath.Join(home, "c", "key")); string(data) != "other-key\n" {
		t.Errorf("key after --force = %q", data)
	}
}

func TestInitKeepsAnExistingKeyFile(t *testing.T) {
	st, home := newInitTest(t, 1000, "")
	key := filepath.Join(home, "vcp.key")
	if err := os.WriteFile(key, []byte("kept-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(home, "config.toml")
	out := st.mustRun(t, "init", "--hub", "ws://127.0.0.1:1", "--config", cfgPath, "--key-file", key)
	if !strings.Contains(out, "kept the existing key file "+key) {
		t.Errorf("output:\n%s", out)
	}
	if data, _ := os.ReadFile(key); string(data) != "kept-key\n" {
		t.Errorf("key file = %q", data)
	}
}

func TestInitPromptsWithoutEcho(t *testing.T) {
	st, home := newInitTest(t, 1000, "")
	var prompts []string
	st.h.stdinIsTerminal = func() bool { return true }
	st.h.readHidden = func(prompt string) (string, error) {
		prompts = append(prompts, prompt)
		return initKey + "\n", nil
	}
	cfgPath := filepath.Join(home, "config.toml")
	out := st.mustRun(t, "init", "--hub", "ws://127.0.0.1:1", "--config", cfgPath)
	if len(prompts) != 1 || !strings.Contains(prompts[0], "input is hidden") {
		t.Errorf("prompts = %q", prompts)
	}
	if strings.Contains(out, initKey) {
		t.Error("the key was echoed")
	}
	if data, _ := os.ReadFile(filepath.Join(home, "key")); string(data) != initKey+"\n" {
		t.Errorf("key file = %q", data)
	}
}

// withSystemd makes the host look like a machine where systemd is PID 1,
// with the user's manager running.
func (st *serviceTest) withSystemd(t *testing.T) {
	t.Helper()
	st.env["XDG_RUNTIME_DIR"] = "/run/user/1000"
	for _, p := range []string{service.SystemdBootedDir, service.SystemdPrivate, "/run/user/1000/bus"} {
		dir := p
		if p != service.SystemdBootedDir {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(filepath.Join(st.root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if p != service.SystemdBootedDir {
			st.writeFile(t, p, "", 0o600)
		}
	}
}

// As root the config is 0640 and given to the vcpnode group when it
// exists; every file written is named with its mode. The system paths are
// given with --config, so the test writes nothing outside its directory.
func TestInitAsRootWritesTheSystemLayout(t *testing.T) {
	for _, groupExists := range []bool{true, false} {
		t.Run(fmt.Sprintf("group exists %v", groupExists), func(t *testing.T) {
			st, home := newInitTest(t, 0, initKey)
			st.withSystemd(t)
			gid := os.Getgid() // a group this process may give files to
			if groupExists {
				st.h.groupID = func(name string) (int, error) {
					if name != "vcpnode" {
						return 0, fmt.Errorf("no group %s", name)
					}
					return gid, nil
				}
			}
			dir := filepath.Join(home, "etc", "vcpnode")
			cfgPath := filepath.Join(dir, "config.toml")
			out := st.mustRun(t, "init", "--hub", "wss://vcp.example.org", "--config", cfgPath)
			if m := mode(t, cfgPath); m != 0o640 {
				t.Errorf("config mode %04o, want 0640", m)
			}
			if m := mode(t, filepath.Join(dir, "key")); m != 0o600 {
				t.Errorf("key mode %04o", m)
			}
			wantCfg := "wrote " + cfgPath + " (mode 0640; no group vcpnode here yet)\n"
			if groupExists {
				wantCfg = "wrote " + cfgPath + " (mode 0640, group vcpnode)\n"
				if fi, err := os.Stat(cfgPath); err != nil || fileGID(fi) != gid {
					t.Errorf("config not given to the group (gid %d): %v", gid, err)
				}
			}
			for _, want := range []string{"created directory " + dir + " (mode 0755)\n", "wrote the key to " + filepath.Join(dir, "key") + " (mode 0600)\n",
				wantCfg, "next: vcpnode service install --system --config " + cfgPath} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// init suggests `service install` only where a service manager can take
// it; elsewhere it says why and suggests `vcpnode run`.
func TestInitSuggestsServiceOnlyWhereItCanWork(t *testing.T) {
	for _, euid := range []int{0, 1000} {
		st, home := newInitTest(t, euid, initKey)
		cfgPath := filepath.Join(home, "config.toml")
		out := st.mustRun(t, "init", "--hub", "wss://vcp.example.org", "--config", cfgPath)
		if strings.Contains(out, "next: vcpnode service install") || !strings.Contains(out, "next: vcpnode run --config "+cfgPath+"   (no service install here: systemd is not the init system here") {
			t.Errorf("euid %d without systemd:\n%s", euid, out)
		}
	}
}

func TestInitRefusesBadInput(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		want     string
	}{
		{"no hub", nil, initKey, exitUsage, "--hub is required"},
		{"bad hub", []string{"--hub", "ftp://h"}, initKey, exitError, "nothing was written"},
		{"bad key", []string{"--hub", "ws://127.0.0.1:1"}, "bad key/with spaces", exitError, "the key was not written"},
		{"no key", []string{"--hub", "ws://127.0.0.1:1"}, "\n", exitError, "no key given"},
		{"missing plugin folder", []string{"--hub", "ws://127.0.0.1:1", "--plugins", filepath.Join(t.TempDir(), "missing")}, initKey, exitError, "nothing was written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, home := newInitTest(t, 1000, tt.stdin)
			cfgPath := filepath.Join(home, "config.toml")
			if code := st.run(append([]string{"init", "--config", cfgPath}, tt.args...)...); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if got := st.stderr.String(); !strings.Contains(got, tt.want) || strings.Contains(got, "with spaces") {
				t.Errorf("stderr = %q, want it to mention %q and not the key", got, tt.want)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 0 {
				t.Errorf("files were written: %v", entries)
			}
		})
	}
}

// The config written by init and service install is made from the real
// config.example.toml: this fails when the example changes shape.
func TestExampleConfig(t *testing.T) {
	name := `box "one" \ two`
	text, err := exampleConfig(configValues{URL: "wss://vcp.example.org", Name: name, KeyFile: "/etc/vcpnode/key"}, "line one\nline two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "## line one\n## line two\n\n") {
		t.Errorf("header:\n%s", text[:80])
	}
	cfg, err := config.Parse([]byte(text), "filled", toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hub.URL != "wss://vcp.example.org" || cfg.Hub.Name != name || cfg.Hub.KeyFile != "/etc/vcpnode/key" {
		t.Errorf("hub = %+v", cfg.Hub)
	}
	// Nothing else of the example changed: three header lines were added.
	if n := len(strings.Split(text, "\n")) - len(strings.Split(vcpnode.ConfigExample, "\n")); n != 3 {
		t.Errorf("filled config has %d more lines than the example, want 3", n)
	}
	empty, err := exampleConfig(configValues{}, "")
	if err != nil || empty != vcpnode.ConfigExample {
		t.Errorf("with no values the example should come back unchanged (err %v)", err)
	}
}

// init's next step is the README's: the program as the user ran it, and
// no --config for the config run finds by itself; --config only for one
// it would not find.
func TestInitNextStepIsTheReadmes(t *testing.T) {
	st, home := newInitTest(t, 1000, initKey+"\n")
	st.app.prog = progName("./vcpnode")
	out := st.mustRun(t, "init", "--hub", "ws://127.0.0.1:6005", "--name", "laptop", "--key-stdin")
	if !strings.Contains(out, "next: ./vcpnode run   (no service install here") {
		t.Errorf("init's next step is not the README's `./vcpnode run`:\n%s", out)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n./vcpnode run\n") {
		t.Error("the README no longer runs ./vcpnode run after init: keep init's next step the same")
	}

	st, _ = newInitTest(t, 1000, initKey+"\n")
	elsewhere := filepath.Join(home, "elsewhere.toml")
	out = st.mustRun(t, "init", "--hub", "ws://127.0.0.1:6005", "--config", elsewhere, "--key-stdin")
	if !strings.Contains(out, "next: vcpnode run --config "+elsewhere+"   (no service") {
		t.Errorf("a config run would not find needs --config:\n%s", out)
	}
	for arg0, want := range map[string]string{"./vcpnode": "./vcpnode", "bin/vcpnode": "bin/vcpnode", "vcpnode": "vcpnode", "/tmp/go-build1/exe/vcpnode": "vcpnode"} {
		if got := progName(arg0); got != want {
			t.Errorf("progName(%q) = %q, want %q", arg0, got, want)
		}
	}
}
