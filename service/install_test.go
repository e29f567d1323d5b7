package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// withSystemd makes the host look booted with systemd, reachable for
// both scopes.
func (h *Host) withSystemd(t *testing.T) {
	h.touch(t, SystemdBootedDir+"/.keep", "")
	h.touch(t, SystemdPrivate, "")
	h.touch(t, "/run/user/1000/bus", "")
}

func TestInstallAndPurgeSystemd(t *testing.T) {
	h, cmds := testHost(t, "linux", 0, nil)
	h.withSystemd(t)
	h.touch(t, "/etc/vcpnode/secret", "k3y\n")
	l, err := h.NewLayout(true, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Config, l.ConfigFrom, l.Binary = "/etc/vcpnode/config.toml", "test", "/opt/vcpnode/bin/vcpnode"
	l.NewConfig = []byte("[hub]\nurl = \"ws://127.0.0.1:6005\"\nkey_file = \"/etc/vcpnode/secret\"\n")
	var out strings.Builder
	if err := h.Do(context.Background(), &out, l, Install, Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	want := []string{
		"systemd-sysusers /etc/sysusers.d/vcpnode.conf", "chgrp vcpnode /etc/vcpnode/config.toml",
		"systemctl daemon-reload", "systemctl enable vcpnode.service", "systemctl restart vcpnode.service",
	}
	if got := cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	unit, err := os.ReadFile(filepath.Join(h.FSRoot, l.UnitPath))
	if err != nil || !strings.Contains(string(unit), "\nLoadCredential=vcp_key:/etc/vcpnode/secret\n") {
		t.Errorf("unit (%v):\n%s", err, unit)
	}
	if strings.Contains(out.String(), "k3y") {
		t.Errorf("install printed the key:\n%s", out.String())
	}
	entry, err := os.ReadFile(filepath.Join(h.FSRoot, sysusersPath))
	if err != nil || !strings.HasSuffix(string(entry), createdUserMark) {
		t.Errorf("sysusers.d entry of an install that makes the user (%v):\n%s", err, entry)
	}

	// The user install made is there now; purge removes it with the rest.
	h.touch(t, "/etc/passwd", "root:x:0:0::/root:/bin/sh\nvcpnode:x:990:990::/:/usr/sbin/nologin\n")
	h.touch(t, "/var/lib/vcpnode/state.json", "{}")
	cmds.Take()
	out.Reset()
	if err := h.Do(context.Background(), &out, l, Uninstall, Options{Purge: true}); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out.String())
	}
	want = []string{"systemctl disable --now vcpnode.service", "systemctl daemon-reload", "systemctl reset-failed vcpnode.service", "userdel vcpnode"}
	if got := cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	for _, p := range []string{l.UnitPath, l.Config, "/etc/vcpnode/secret", "/etc/vcpnode", "/var/lib/vcpnode", sysusersPath} {
		if h.exists(p) {
			t.Errorf("%s is left after uninstall --purge", p)
		}
	}
}

func TestInstallUserSystemdWithoutAKey(t *testing.T) {
	env := map[string]string{"HOME": "/home/alice", "USER": "alice", "XDG_RUNTIME_DIR": "/run/user/1000"}
	h, cmds := testHost(t, "linux", 1000, env)
	h.withSystemd(t)
	l, err := h.NewLayout(false, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Config, l.Binary = DefaultConfigPath("linux", false, h.Getenv, l.Home), "/usr/local/bin/vcpnode"
	l.NewConfig = []byte("[hub]\nkey_file = \"" + l.DefaultKeyFile() + "\"\n")
	var out strings.Builder
	if err := h.Do(context.Background(), &out, l, Install, Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	if got, want := cmds.Take(), []string{"systemctl --user daemon-reload", "systemctl --user enable vcpnode.service"}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q (not started without a key)", got, want)
	}
	if !strings.Contains(out.String(), "note: not started: ") || !strings.Contains(out.String(), "then: systemctl --user start vcpnode.service") {
		t.Errorf("no note on why it did not start:\n%s", out.String())
	}
	fi, err := os.Stat(filepath.Join(h.FSRoot, l.Config))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the user's new config: %v, %v", fi, err)
	}

	// Uninstall without --purge keeps the config and names it.
	cmds.Take()
	out.Reset()
	if err := h.Do(context.Background(), &out, l, Uninstall, Options{}); err != nil {
		t.Fatal(err)
	}
	if !h.exists(l.Config) || h.exists(l.UnitPath) || !strings.Contains(out.String(), "note: kept "+l.Config) {
		t.Errorf("uninstall without --purge:\n%s", out.String())
	}
}

func TestInstallLaunchd(t *testing.T) {
	h, cmds := testHost(t, "darwin", 501, map[string]string{"HOME": "/Users/alice"})
	l, err := h.NewLayout(false, false)
	if err != nil {
		t.Fatal(err)
	}
	h.touch(t, "/Users/alice/.config/vcpnode/key", "k3y\n")
	l.Config, l.Binary = "/Users/alice/.config/vcpnode/config.toml", "/usr/local/bin/vcpnode"
	l.NewConfig = []byte("[hub]\nurl = \"ws://127.0.0.1:6005\"\nkey_file = \"" + l.DefaultKeyFile() + "\"\n")
	cmds.Fail["launchctl print"] = 113 // not loaded yet
	var out strings.Builder
	if err := h.Do(context.Background(), &out, l, Install, Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out.String())
	}
	target := "gui/501/com.github.vcpnode"
	want := []string{"launchctl print " + target, "launchctl enable " + target, "launchctl bootstrap gui/501 " + l.UnitPath}
	if got := cmds.Take(); !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}

	// Loaded and unchanged: a restart; loaded and changed: reloaded.
	delete(cmds.Fail, "launchctl print")
	cmds.Take()
	if err := h.Do(context.Background(), &out, l, Install, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := cmds.Take(), []string{"launchctl print " + target, "launchctl kickstart -k " + target}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	l.Binary = "/opt/vcpnode"
	cmds.Take()
	if err := h.Do(context.Background(), &out, l, Install, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := cmds.Take(), []string{"launchctl print " + target, "launchctl bootout " + target, "launchctl enable " + target, "launchctl bootstrap gui/501 " + l.UnitPath}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}

	cmds.Take()
	if err := h.Do(context.Background(), &out, l, Uninstall, Options{Purge: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := cmds.Take(), []string{"launchctl print " + target, "launchctl bootout " + target}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	for _, p := range []string{l.UnitPath, l.Config, l.DefaultKeyFile(), l.LogDir} {
		if h.exists(p) {
			t.Errorf("%s is left after uninstall --purge", p)
		}
	}
}

func TestInstallRefusesABrokenConfig(t *testing.T) {
	h, cmds := testHost(t, "linux", 0, nil)
	h.withSystemd(t)
	h.touch(t, "/etc/vcpnode/config.toml", "[node]\nmax_concurrent = 0\n")
	l, err := h.NewLayout(true, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Config, l.Binary = "/etc/vcpnode/config.toml", "/usr/local/bin/vcpnode"
	var out strings.Builder
	err = h.Do(context.Background(), &out, l, Install, Options{})
	if err == nil || !strings.Contains(err.Error(), "fix the config first") {
		t.Errorf("err = %v", err)
	}
	if ran := cmds.Take(); len(ran) != 0 || h.exists(l.UnitPath) {
		t.Errorf("a refused install ran %q or wrote the unit", ran)
	}
}
