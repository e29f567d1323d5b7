package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeAt writes content at path, making its directory.
func writeAt(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Without --config or $VCPNODE_CONFIG, every command finds the file
// `vcpnode init` writes ($XDG_CONFIG_HOME, else ~/.config), then, as root
// only, the system one; `config show` names the file it used.
func TestConfigSearch(t *testing.T) {
	home, sys := t.TempDir(), t.TempDir()
	user := filepath.Join(home, ".config", "vcpnode", "config.toml")
	system := filepath.Join(sys, "etc", "vcpnode", "config.toml")
	setup := func(euid int) *testApp {
		ta := newTestApp(t)
		ta.env["HOME"] = home
		ta.systemConfig = system
		ta.euid = func() int { return euid }
		return ta
	}

	// Nothing there: the error names where it looked (the system file only for root).
	ta := setup(1000)
	if code := ta.run("config", "check"); code != exitUsage || !strings.Contains(ta.stderr.String(), "(looked for "+user+")") {
		t.Errorf("no config as a user: exit %d, stderr %q", code, ta.stderr)
	}
	ta = setup(0)
	if code := ta.run("config", "check"); code != exitUsage || !strings.Contains(ta.stderr.String(), user+" and "+system) {
		t.Errorf("no config as root: exit %d, stderr %q", code, ta.stderr)
	}

	// The system file is used by root only.
	writeAt(t, system, "[log]\nlevel = \"warn\"\n")
	ta = setup(0)
	if code := ta.run("config", "show"); code != exitOK || !strings.HasPrefix(ta.stdout.String(), "# "+system+" ") {
		t.Errorf("root: exit %d, stdout %.80q, stderr %q", code, ta.stdout, ta.stderr)
	}
	ta = setup(1000)
	if code := ta.run("config", "show"); code != exitUsage {
		t.Errorf("a user found the system config: exit %d, stdout %.80q", code, ta.stdout)
	}

	// The user's file comes first, for run too.
	writeAt(t, user, "[log]\nlevel = \"debug\"\n")
	ta = setup(0)
	if code := ta.run("config", "show"); code != exitOK || !strings.HasPrefix(ta.stdout.String(), "# "+user+" ") || !strings.Contains(ta.stdout.String(), `level = 'debug'`) {
		t.Errorf("user config: exit %d, stdout %.200q", code, ta.stdout)
	}
	ta = setup(1000)
	exit := startRun(ta)
	waitClosed(t, ta.node.running, "the node to run from the found config")
	ta.sigs <- os.Interrupt
	if code := waitExit(t, exit); code != exitOK {
		t.Errorf("run: exit %d, stderr %q", code, ta.stderr)
	}

	// $XDG_CONFIG_HOME moves the user's file.
	xdg := t.TempDir()
	moved := writeAt(t, filepath.Join(xdg, "vcpnode", "config.toml"), "")
	ta = setup(1000)
	ta.env["XDG_CONFIG_HOME"] = xdg
	if code := ta.run("config", "show"); code != exitOK || !strings.HasPrefix(ta.stdout.String(), "# "+moved+" ") {
		t.Errorf("XDG_CONFIG_HOME: exit %d, stdout %.80q", code, ta.stdout)
	}

	// The control commands read [control] socket from the same file.
	sock := filepath.Join(t.TempDir(), "found.sock")
	writeAt(t, user, "[control]\nsocket = \""+sock+"\"\n")
	ta = setup(1000)
	if code := ta.run("status"); code != exitError || !strings.Contains(ta.stderr.String(), "cannot reach vcpnode at "+sock) {
		t.Errorf("status: exit %d, stderr %q", code, ta.stderr)
	}
}
