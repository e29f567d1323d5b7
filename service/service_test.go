package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/service/servicetest"
)

// testHost is a host whose file system is rooted in a temporary directory,
// with systemd's sockets there for both scopes.
func testHost(t *testing.T, goos string, euid int, env map[string]string) (*Host, *servicetest.Commands) {
	t.Helper()
	cmds := servicetest.New()
	h := &Host{GOOS: goos, EUID: euid, Commands: cmds, FSRoot: t.TempDir(),
		Getenv: func(k string) string { return env[k] }}
	return h, cmds
}

func (h *Host) touch(t *testing.T, p string, content string) {
	t.Helper()
	full := filepath.Join(h.FSRoot, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNewLayout(t *testing.T) {
	env := map[string]string{"HOME": "/home/alice", "XDG_CONFIG_HOME": "/xdg/config", "XDG_STATE_HOME": "relative/is/ignored"}
	tests := []struct {
		goos                     string
		euid                     int
		system                   bool
		unit, state, log, config string
	}{
		{"linux", 0, true, "/etc/systemd/system/vcpnode.service", "/var/lib/vcpnode", "", "/etc/vcpnode/config.toml"},
		{"linux", 1000, false, "/xdg/config/systemd/user/vcpnode.service", "/home/alice/.local/state/vcpnode", "", "/xdg/config/vcpnode/config.toml"},
		{"darwin", 0, true, "/Library/LaunchDaemons/com.github.vcpnode.plist", "/usr/local/var/vcpnode", "/Library/Logs/vcpnode", "/usr/local/etc/vcpnode/config.toml"},
		{"darwin", 501, false, "/home/alice/Library/LaunchAgents/com.github.vcpnode.plist", "", "/home/alice/Library/Logs/vcpnode", "/xdg/config/vcpnode/config.toml"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/system=%v", tt.goos, tt.system), func(t *testing.T) {
			h, _ := testHost(t, tt.goos, tt.euid, env)
			l, err := h.NewLayout(tt.system, false)
			if err != nil {
				t.Fatal(err)
			}
			if l.UnitPath != tt.unit || l.StateDir != tt.state || l.LogDir != tt.log {
				t.Errorf("unit %q, state %q, log %q; want %q, %q, %q", l.UnitPath, l.StateDir, l.LogDir, tt.unit, tt.state, tt.log)
			}
			if got := DefaultConfigPath(tt.goos, tt.system, h.Getenv, l.Home); got != tt.config {
				t.Errorf("DefaultConfigPath = %q, want %q", got, tt.config)
			}
		})
	}
}

func TestNewLayoutRefuses(t *testing.T) {
	tests := []struct {
		name   string
		goos   string
		euid   int
		system bool
		dryRun bool
		env    map[string]string
		want   string
	}{
		{"unknown OS", "windows", 0, true, false, nil, "windows is not supported"},
		{"system as a user", "linux", 1000, true, false, nil, "a system service needs root"},
		{"user as root", "linux", 0, false, false, map[string]string{"HOME": "/root"}, "--user as root"},
		{"no home", "linux", 1000, false, false, map[string]string{"HOME": "relative"}, "$HOME is not set to an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := testHost(t, tt.goos, tt.euid, tt.env)
			_, err := h.NewLayout(tt.system, tt.dryRun)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// A dry run shows any scope to anyone.
	h, _ := testHost(t, "linux", 1000, nil)
	if _, err := h.NewLayout(true, true); err != nil {
		t.Errorf("dry run of a system service as a user: %v", err)
	}
}

func TestBinary(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "vcpnode")
	if err := os.WriteFile(real, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	exe := func(p string) func() (string, error) { return func() (string, error) { return p, nil } }
	if got, err := Binary(exe(link), ""); err != nil || got != real {
		t.Errorf("Binary(symlink) = %q, %v; want %q", got, err, real)
	}
	if got, err := Binary(exe(link), "/opt/vcpnode"); err != nil || got != "/opt/vcpnode" {
		t.Errorf("Binary(--binary) = %q, %v", got, err)
	}
	if _, err := Binary(exe("/tmp/go-build123/b001/exe/vcpnode"), ""); err == nil || !strings.Contains(err.Error(), "build cache") {
		t.Errorf("a go run binary: err = %v", err)
	}
	if _, err := Binary(func() (string, error) { return "", errors.New("gone") }, ""); err == nil || !strings.Contains(err.Error(), "pass --binary") {
		t.Errorf("no executable: err = %v", err)
	}
}

func TestManagerProblem(t *testing.T) {
	env := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}
	h, _ := testHost(t, "linux", 0, env)
	for _, system := range []bool{true, false} {
		if err := h.ManagerProblem(system); err == nil || !strings.Contains(err.Error(), "systemd is not the init system") {
			t.Errorf("no systemd, system=%v: %v", system, err)
		}
	}
	h.touch(t, SystemdBootedDir+"/.keep", "")
	if err := h.ManagerProblem(true); err == nil || !strings.Contains(err.Error(), "cannot reach systemd") {
		t.Errorf("no system socket: %v", err)
	}
	if err := h.ManagerProblem(false); err == nil || !strings.Contains(err.Error(), "no user manager answers") {
		t.Errorf("no user bus: %v", err)
	}
	h.touch(t, SystemBus, "")
	h.touch(t, "/run/user/1000/bus", "")
	if err := h.ManagerProblem(true); err != nil {
		t.Errorf("system bus there: %v", err)
	}
	if err := h.ManagerProblem(false); err != nil {
		t.Errorf("user bus there: %v", err)
	}
	delete(env, "XDG_RUNTIME_DIR")
	if err := h.ManagerProblem(false); err == nil || !strings.Contains(err.Error(), "no user session") {
		t.Errorf("no session: %v", err)
	}
	mac, _ := testHost(t, "darwin", 501, nil)
	if err := mac.ManagerProblem(false); err != nil {
		t.Errorf("launchd is always there: %v", err)
	}
	// A system unit cannot see a binary under a private /tmp.
	h.touch(t, SystemdPrivate, "")
	l := Layout{System: true, Manager: Systemd, Binary: "/tmp/vcpnode"}
	if err := h.InstallProblem(l); err == nil || !strings.Contains(err.Error(), "PrivateTmp") {
		t.Errorf("binary in /tmp: %v", err)
	}
}

func TestControlPlans(t *testing.T) {
	h, cmds := testHost(t, "linux", 1000, map[string]string{"HOME": "/home/alice"})
	l, err := h.NewLayout(false, false)
	if err != nil {
		t.Fatal(err)
	}
	for op, want := range map[Op]string{Start: "systemctl --user start vcpnode.service", Stop: "systemctl --user stop vcpnode.service",
		Status: "systemctl --user status --no-pager vcpnode.service"} {
		p, err := h.Plan(context.Background(), l, op, false)
		if err != nil || len(p) != 1 || strings.Join(p[0].argv, " ") != want {
			t.Errorf("op %d: plan %+v, %v; want %q", op, p, err, want)
		}
	}

	// launchd: what start and stop do depends on whether the job is loaded.
	mac, macCmds := testHost(t, "darwin", 501, map[string]string{"HOME": "/Users/alice"})
	ml, err := mac.NewLayout(false, false)
	if err != nil {
		t.Fatal(err)
	}
	macCmds.Fail["launchctl print"] = 113 // not loaded
	p, err := mac.Plan(context.Background(), ml, Stop, false)
	if err != nil || len(p) != 1 || p[0].kind != actNote {
		t.Errorf("stop of an unloaded job: %+v, %v", p, err)
	}
	p, err = mac.Plan(context.Background(), ml, Start, false)
	if err != nil || len(p) != 2 || p[1].argv[1] != "bootstrap" {
		t.Errorf("start of an unloaded job: %+v, %v", p, err)
	}
	delete(macCmds.Fail, "launchctl print")
	p, err = mac.Plan(context.Background(), ml, Start, false)
	if err != nil || len(p) != 1 || p[0].argv[1] != "kickstart" {
		t.Errorf("start of a loaded job: %+v, %v", p, err)
	}

	// Status of a stopped service is ErrNotRunning; no manager is said so.
	h.touch(t, SystemdBootedDir+"/.keep", "")
	h.Getenv = func(k string) string { return map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}[k] }
	h.touch(t, "/run/user/1000/bus", "")
	cmds.Fail["systemctl --user status"] = 3
	var out strings.Builder
	if err := h.Do(context.Background(), &out, l, Status, Options{}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("status of a stopped service: %v", err)
	}
	if err := os.Remove(filepath.Join(h.FSRoot, "/run/user/1000/bus")); err != nil {
		t.Fatal(err)
	}
	if err := h.Do(context.Background(), &out, l, Start, Options{}); err == nil || !strings.Contains(err.Error(), "no service manager to ask") {
		t.Errorf("start without a user manager: %v", err)
	}
}

func TestRunnerDryRunChangesNothing(t *testing.T) {
	root := t.TempDir()
	cmds := servicetest.New()
	var out strings.Builder
	r := &Runner{Out: &out, Commands: cmds, FSRoot: root, DryRun: true, Header: "config /etc/x (test)"}
	p := Plan{
		mkdirAction("/etc/x", 0o755),
		writeAction("/etc/x/unit", 0o644, []byte("line 1\nline 2\n")),
		{kind: actCreate, path: "/etc/x/config", mode: 0o600, content: []byte("k = 1\n"), summary: "an example"},
		runAction("systemctl", "daemon-reload"),
		{kind: actRemove, path: "/etc/x/old"},
		noteAction("said %s", "once"),
	}
	if err := r.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 || len(cmds.Take()) != 0 {
		t.Errorf("a dry run changed %v or ran a command", entries)
	}
	want := "dry run: nothing is changed; this is what would be done\nconfig /etc/x (test)\n" +
		"create directory /etc/x (0755)\nwrite /etc/x/unit (0644):\n    line 1\n    line 2\n" +
		"write /etc/x/config (0600): an example\nrun: systemctl daemon-reload\nnote: said once\n"
	if out.String() != want {
		t.Errorf("dry run said:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestRunnerUndoesAFailedPlan(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/kept"), []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	cmds := servicetest.New()
	cmds.Fail["systemctl restart"] = 1
	var out strings.Builder
	r := &Runner{Out: &out, Commands: cmds, FSRoot: root, UndoOnFailure: true}
	enable := runAction("systemctl", "enable")
	enable.undo = []string{"systemctl", "disable"}
	p := Plan{
		mkdirAction("/etc/a/b", 0o750),
		writeAction("/etc/a/b/unit", 0o644, []byte("unit")),
		writeAction("/etc/kept", 0o644, []byte("new")),
		{kind: actCreate, path: "/etc/kept", content: []byte("never")},
		tolerantRun("systemctl", "reset-failed"),
		enable,
		runAction("systemctl", "restart"),
		runAction("never", "run"),
	}
	cmds.Fail["systemctl reset-failed"] = 5
	err := r.Execute(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "everything it had done is undone") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(root, "etc/a")); !os.IsNotExist(err) {
		t.Errorf("the made directories stayed: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, "etc/kept"))
	if err != nil || string(data) != "old" {
		t.Errorf("the replaced file is %q, %v; want it restored", data, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/kept")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the restored file's mode: %v, %v", fi.Mode(), err)
	}
	want := []string{"systemctl reset-failed", "systemctl enable", "systemctl restart", "systemctl disable"}
	if got := cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	for _, said := range []string{"keep existing /etc/kept", "(systemctl: exit status 5; going on)", "undone: systemctl disable"} {
		if !strings.Contains(out.String(), said) {
			t.Errorf("output lacks %q:\n%s", said, out.String())
		}
	}
}

func TestRunnerRemoves(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"empty", "full/sub", "tree/a/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"full/sub/f", "tree/a/b/f", "file"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	r := &Runner{Out: &out, FSRoot: root}
	p := Plan{
		{kind: actRemove, path: "/file"},
		{kind: actRemove, path: "/missing"},
		{kind: actRemoveEmpty, path: "/empty"},
		{kind: actRemoveEmpty, path: "/full"},
		{kind: actRemoveAll, path: "/tree"},
	}
	if err := r.Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"file": false, "empty": false, "full/sub/f": true, "tree": false} {
		if _, err := os.Stat(filepath.Join(root, p)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
	if want := "removed /file\nremoved /empty\nremoved /tree\n"; out.String() != want {
		t.Errorf("said %q, want %q", out.String(), want)
	}
}
