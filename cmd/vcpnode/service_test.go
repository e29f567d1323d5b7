package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/service/servicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// serviceTest is a test app with a host whose file system is rooted in a
// temporary directory.
type serviceTest struct {
	*testApp
	h    *host
	cmds *servicetest.Commands
	root string
}

func newServiceTest(t *testing.T, goos string, euid int) *serviceTest {
	t.Helper()
	st := &serviceTest{testApp: newTestApp(t), cmds: servicetest.New(), root: t.TempDir()}
	st.h = &host{
		goos:            goos,
		euid:            euid,
		executable:      func() (string, error) { return "/usr/local/bin/vcpnode", nil },
		commands:        st.cmds,
		fsRoot:          st.root,
		stdin:           strings.NewReader(""),
		stdinIsTerminal: func() bool { return false },
		readHidden:      func(string) (string, error) { return "", errors.New("no terminal in tests") },
		groupID:         func(string) (int, error) { return 0, errors.New("no such group in tests") },
	}
	st.env["HOME"] = "/home/alice"
	st.env["USER"] = "alice"
	if goos == "darwin" {
		st.env["HOME"] = "/Users/alice"
	}
	return st
}

// run executes the command line with `service` and `init` bound to st.h.
func (st *serviceTest) run(args ...string) int {
	st.app.host = st.h
	return execute(st.app, args)
}

func (st *serviceTest) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	before := len(st.stdout.String())
	if code := st.run(args...); code != exitOK {
		t.Fatalf("vcpnode %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, st.stdout, st.stderr)
	}
	return st.stdout.String()[before:]
}

// file reads a path as installed, under the test's root.
func (st *serviceTest) file(t *testing.T, path string) (string, fs.FileMode) {
	t.Helper()
	p := filepath.Join(st.root, path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), fi.Mode().Perm()
}

func (st *serviceTest) writeFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(st.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func (st *serviceTest) exists(path string) bool {
	_, err := os.Lstat(filepath.Join(st.root, path))
	return err == nil
}

func TestServiceInstallDryRun(t *testing.T) {
	tests := []struct {
		goos  string
		euid  int
		scope string
	}{
		{"linux", 1000, "--user"},
		{"linux", 0, "--system"},
		{"darwin", 501, "--user"},
		{"darwin", 0, "--system"},
	}
	for _, tt := range tests {
		name := tt.goos + strings.ReplaceAll(tt.scope, "--", "-")
		t.Run(name, func(t *testing.T) {
			st := newServiceTest(t, tt.goos, tt.euid)
			st.cmds.Fail["launchctl print"] = 113 // not loaded
			out := st.mustRun(t, "service", "install", tt.scope, "--dry-run")

			golden := filepath.Join("testdata", "service-install-"+name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/vcpnode -run TestServiceInstallDryRun -update creates it)", err)
			}
			if out != string(want) {
				t.Errorf("dry-run output differs from %s (rerun with -update if the change is meant):\n%s", golden, out)
			}
			// A dry run writes nothing and runs nothing but launchctl's
			// read-only question.
			if entries, _ := os.ReadDir(st.root); len(entries) != 0 {
				t.Errorf("a dry run created %v", entries)
			}
			for _, c := range st.cmds.Take() {
				if !strings.HasPrefix(c, "launchctl print ") {
					t.Errorf("a dry run ran %q", c)
				}
			}
		})
	}
}

func TestServiceInstallUserSystemdIsIdempotent(t *testing.T) {
	st := newServiceTest(t, "linux", 1000)
	st.withSystemd(t)
	const (
		config = "/home/alice/.config/vcpnode/config.toml"
		key    = "/home/alice/.config/vcpnode/key"
		unit   = "/home/alice/.config/systemd/user/vcpnode.service"
	)

	// First run: no config and no key. The config is made, the unit written
	// and enabled, but nothing is started.
	out := st.mustRun(t, "service", "install")
	if got := st.cmds.Take(); !slices.Equal(got, []string{"systemctl --user daemon-reload", "systemctl --user enable vcpnode.service"}) {
		t.Errorf("first install ran %q", got)
	}
	if !strings.Contains(out, "note: not started: hub.key_file: open "+key) {
		t.Errorf("first install does not say why it did not start:\n%s", out)
	}
	cfg, mode := st.file(t, config)
	if mode != 0o600 || !strings.Contains(cfg, "\nkey_file = \""+key+"\"\n") {
		t.Errorf("config (mode %04o) does not point at the key file:\n%s", mode, cfg)
	}
	unitText, mode := st.file(t, unit)
	if mode != 0o644 || !strings.Contains(unitText, "ExecStart=/usr/local/bin/vcpnode run --config "+config+"\n") {
		t.Errorf("unit (mode %04o):\n%s", mode, unitText)
	}

	// With a key in place the service starts, and a second and third run
	// change nothing but restart it.
	st.writeFile(t, key, "the-key\n", 0o600)
	for i := range 2 {
		out = st.mustRun(t, "service", "install", "--user")
		if got := st.cmds.Take(); !slices.Equal(got, []string{"systemctl --user daemon-reload", "systemctl --user enable vcpnode.service", "systemctl --user restart vcpnode.service"}) {
			t.Errorf("install %d ran %q", i+2, got)
		}
		for _, want := range []string{"keep existing " + config, "unchanged " + unit, "loginctl enable-linger alice"} {
			if !strings.Contains(out, want) {
				t.Errorf("install %d output lacks %q:\n%s", i+2, want, out)
			}
		}
		if again, _ := st.file(t, config); again != cfg {
			t.Errorf("install %d changed the config", i+2)
		}
	}
}

func TestServiceInstallSystemSystemd(t *testing.T) {
	st := newServiceTest(t, "linux", 0)
	st.withSystemd(t)
	st.writeFile(t, "/etc/vcpnode/config.toml", "[hub]\nurl = \"ws://127.0.0.1:6005\"\nkey_file = \"/etc/vcpnode/secret\"\n", 0o644)
	st.writeFile(t, "/etc/vcpnode/secret", "k3y\n", 0o600)
	out := st.mustRun(t, "service", "install", "--binary", "/opt/vcpnode/bin/vcpnode")

	want := []string{
		"systemd-sysusers /etc/sysusers.d/vcpnode.conf", "chgrp vcpnode /etc/vcpnode/config.toml",
		"systemctl daemon-reload", "systemctl enable vcpnode.service", "systemctl restart vcpnode.service",
	}
	if got := st.cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	unit, _ := st.file(t, "/etc/systemd/system/vcpnode.service")
	for _, line := range []string{
		"ExecStart=/opt/vcpnode/bin/vcpnode run --config /etc/vcpnode/config.toml",
		"LoadCredential=vcp_key:/etc/vcpnode/secret", // the config's key file, not the default
		"User=vcpnode",
	} {
		if !strings.Contains(unit, "\n"+line+"\n") {
			t.Errorf("unit lacks %q", line)
		}
	}
	if sysusers, _ := st.file(t, "/etc/sysusers.d/vcpnode.conf"); !strings.Contains(sysusers, "u vcpnode ") {
		t.Errorf("sysusers.d entry:\n%s", sysusers)
	}
	if strings.Contains(out, "k3y") {
		t.Errorf("install printed the key:\n%s", out)
	}

	// A binary under /home is flagged: ProtectHome= hides it from the service.
	out = st.mustRun(t, "service", "install", "--binary", "/home/alice/go/bin/vcpnode")
	if !strings.Contains(out, "note: /home/alice/go/bin/vcpnode is under /home") {
		t.Errorf("no note about a binary under /home:\n%s", out)
	}
}

func TestServiceInstallRefusesABrokenConfig(t *testing.T) {
	st := newServiceTest(t, "linux", 1000)
	st.writeFile(t, "/home/alice/.config/vcpnode/config.toml", "[hub]\nurll = 1\n", 0o600)
	if code := st.run("service", "install"); code != exitError {
		t.Fatalf("exit %d", code)
	}
	if got := st.stderr.String(); !strings.Contains(got, "fix the config first") || !strings.Contains(got, "urll") {
		t.Errorf("stderr = %q", got)
	}
	if st.exists("/home/alice/.config/systemd/user/vcpnode.service") || len(st.cmds.Take()) != 0 {
		t.Error("install went on with a broken config")
	}
}

func TestServiceUninstall(t *testing.T) {
	const (
		config = "/etc/vcpnode/config.toml"
		key    = "/etc/vcpnode/key"
		unit   = "/etc/systemd/system/vcpnode.service"
		state  = "/var/lib/vcpnode/plugins/data"
	)
	setup := func(t *testing.T) *serviceTest {
		st := newServiceTest(t, "linux", 0)
		st.writeFile(t, config, "[hub]\nkey_file = \""+key+"\"\n", 0o644)
		st.writeFile(t, key, "k\n", 0o600)
		st.writeFile(t, unit, "[Service]\n", 0o644)
		st.writeFile(t, state, "x", 0o600)
		return st
	}
	wantCommands := []string{"systemctl disable --now vcpnode.service", "systemctl daemon-reload", "systemctl reset-failed vcpnode.service"}

	t.Run("keeps config and state", func(t *testing.T) {
		st := setup(t)
		st.cmds.Fail["systemctl reset-failed"] = 1 // nothing had failed: tolerated
		out := st.mustRun(t, "service", "uninstall")
		if got := st.cmds.Take(); !slices.Equal(got, wantCommands) {
			t.Errorf("ran %q", got)
		}
		if st.exists(unit) || !st.exists(config) || !st.exists(key) || !st.exists(state) {
			t.Error("uninstall removed the wrong files")
		}
		if !strings.Contains(out, "kept /etc/vcpnode/config.toml and /var/lib/vcpnode (uninstall --purge removes them)") {
			t.Errorf("output:\n%s", out)
		}
		st.mustRun(t, "service", "uninstall") // twice is fine
	})
	t.Run("purge", func(t *testing.T) {
		st := setup(t)
		st.writeFile(t, "/etc/vcpnode/notes.txt", "mine", 0o644)
		st.mustRun(t, "service", "uninstall", "--purge")
		for _, p := range []string{unit, config, key, "/var/lib/vcpnode"} {
			if st.exists(p) {
				t.Errorf("%s survived --purge", p)
			}
		}
		if !st.exists("/etc/vcpnode/notes.txt") {
			t.Error("--purge removed a file it did not make")
		}
	})
}

// Without a service manager (a container, WSL without systemd, OpenRC,
// runit), status, start and stop say so in one sentence and run nothing,
// instead of systemctl's "Failed to connect to bus" and "not running".
func TestServiceWithoutAServiceManagerSaysSo(t *testing.T) {
	for _, op := range []string{"status", "start", "stop"} {
		st := newServiceTest(t, "linux", 1000)
		if code := st.run("service", op); code != exitError {
			t.Errorf("service %s: exit %d, want %d", op, code, exitError)
		}
		want := "vcpnode: no service manager to ask: systemd is not the init system here (no /run/systemd/system): run `vcpnode run` under the supervisor this machine has; `vcpnode status` asks the daemon itself\n"
		if got := st.stderr.String(); got != want {
			t.Errorf("service %s: stderr\n%q\nwant\n%q", op, got, want)
		}
		if ran := st.cmds.Take(); len(ran) != 0 {
			t.Errorf("service %s ran %q", op, ran)
		}
	}
}
