package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// serviceConfigLine is the "config PATH (HOW)" line of `service install`.
func serviceConfigLine(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "config ") {
			return line
		}
	}
	t.Fatalf("no config line in:\n%s", out)
	return ""
}

// `service` finds its config as run and config show do: --config,
// $VCPNODE_CONFIG, $XDG_CONFIG_HOME (else ~/.config)/vcpnode/config.toml,
// then the system file for root; and says which it used. Only temporary
// directories are looked at: a user's in a temp HOME on the real file
// system (so config show can look too), root's under a temp host root.
func TestServiceFindsTheConfigLikeTheOtherCommands(t *testing.T) {
	home := t.TempDir()
	user := func(env map[string]string) *serviceTest {
		st := newServiceTest(t, "linux", 1000)
		st.h.fsRoot = ""                     // only temp paths: HOME and the flags point there
		st.euid = func() int { return 1000 } // config show too, also when the tests run as root
		st.env["HOME"] = home
		for k, v := range env {
			st.env[k] = v
		}
		return st
	}
	// showPath is the file `config show` names.
	showPath := func(env map[string]string) string {
		st := user(env)
		out := st.mustRun(t, "config", "show")
		first, _, _ := strings.Cut(out, "\n")
		path, _, _ := strings.Cut(strings.TrimPrefix(first, "# "), " ")
		return path
	}
	const valid = "[log]\nlevel = \"warn\"\n"

	// Nothing yet: the user's usual place, which install would write.
	st := user(nil)
	want := filepath.Join(home, ".config", "vcpnode", "config.toml")
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run")); got != "config "+want+" (none found; the usual place for this service)" {
		t.Errorf("no config: %q", got)
	}

	// The file init writes, moved by $XDG_CONFIG_HOME: the same one config show uses.
	xdg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": xdg}
	found := writeAt(t, filepath.Join(xdg, "vcpnode", "config.toml"), valid)
	st = user(env)
	out := st.mustRun(t, "service", "install", "--dry-run")
	if got := serviceConfigLine(t, out); got != "config "+found+" (found where vcpnode run and config check look)" {
		t.Errorf("XDG config: %q", got)
	}
	if shown := showPath(env); shown != found {
		t.Errorf("config show used %s, service %s", shown, found)
	}
	if !strings.Contains(out, "run --config "+found) {
		t.Errorf("the unit does not run with %s:\n%s", found, out)
	}

	// $VCPNODE_CONFIG and --config come first, as everywhere.
	other := writeAt(t, filepath.Join(t.TempDir(), "other.toml"), valid)
	env[envConfig] = other
	st = user(env)
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run")); got != "config "+other+" (from $VCPNODE_CONFIG)" {
		t.Errorf("$VCPNODE_CONFIG: %q", got)
	}
	if shown := showPath(env); shown != other {
		t.Errorf("config show used %s, service %s", shown, other)
	}
	st = user(env)
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run", "--config", found)); got != "config "+found+" (from --config)" {
		t.Errorf("--config: %q", got)
	}
}

// Root: the system file is found like run finds it; a file of root's own
// that run would use instead is refused for the system service, never
// passed over in silence. All paths are under a temporary host root.
func TestServiceConfigAsRoot(t *testing.T) {
	const valid = "[log]\nlevel = \"warn\"\n"
	st := newServiceTest(t, "linux", 0)
	st.withSystemd(t)
	st.env["HOME"] = "/root"
	st.writeFile(t, "/etc/vcpnode/config.toml", valid, 0o644)
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run")); got != "config /etc/vcpnode/config.toml (found where vcpnode run and config check look)" {
		t.Errorf("system config: %q", got)
	}

	st.writeFile(t, "/root/.config/vcpnode/config.toml", valid, 0o600)
	before := len(st.stdout.String())
	if code := st.run("service", "install", "--dry-run"); code != exitError {
		t.Errorf("root's own config: exit %d, want %d; stdout %s", code, exitError, st.stdout.String()[before:])
	}
	if msg := st.stderr.String(); !strings.Contains(msg, "vcpnode run and config check use /root/.config/vcpnode/config.toml, which a system service cannot use") ||
		!strings.Contains(msg, "pass --config /etc/vcpnode/config.toml") {
		t.Errorf("stderr = %q", msg)
	}
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run", "--config", "/etc/vcpnode/config.toml")); got != "config /etc/vcpnode/config.toml (from --config)" {
		t.Errorf("--config: %q", got)
	}
	// Stopping, removing (without --purge) or asking about the service
	// does not depend on which config it is: never refused.
	for _, args := range [][]string{{"status"}, {"stop"}, {"uninstall", "--dry-run"}} {
		out := st.mustRun(t, append([]string{"service"}, args...)...)
		if args[0] == "uninstall" && serviceConfigLine(t, out) != "config /etc/vcpnode/config.toml (the system service's; not /root/.config/vcpnode/config.toml, which vcpnode run would use)" {
			t.Errorf("uninstall: %q", serviceConfigLine(t, out))
		}
	}
	before = len(st.stdout.String())
	if code := st.run("service", "uninstall", "--purge", "--dry-run"); code != exitError {
		t.Errorf("uninstall --purge with root's own config: exit %d, want %d; stdout %s", code, exitError, st.stdout.String()[before:])
	}

	// A user's preview of the system service is not about the user's file:
	// root, who installs it, has another home.
	st = newServiceTest(t, "linux", 1000)
	st.writeFile(t, "/home/alice/.config/vcpnode/config.toml", valid, 0o600)
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--system", "--dry-run")); got != "config /etc/vcpnode/config.toml (none found; the usual place for this service)" {
		t.Errorf("--system as a user: %q", got)
	}
	if got := serviceConfigLine(t, st.mustRun(t, "service", "install", "--dry-run")); got != "config /home/alice/.config/vcpnode/config.toml (found where vcpnode run and config check look)" {
		t.Errorf("--user: %q", got)
	}
}
