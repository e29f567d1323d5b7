package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/service/systemd"
)

// The units call `vcpnode run --config F` and `vcpnode reload --config F`:
// both must be commands and flags this binary has.
func TestUnitsCallRealCommands(t *testing.T) {
	system, err := systemd.System(systemd.DefaultSystem())
	if err != nil {
		t.Fatal(err)
	}
	user, err := systemd.User(systemd.DefaultUser())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, unit := range [][]byte{system, user} {
		for line := range strings.Lines(string(unit)) {
			directive, value, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok || (directive != "ExecStart" && directive != "ExecReload") {
				continue
			}
			args := strings.Fields(value)[1:] // the binary's path first
			root := newRootCmd(newTestApp(t).app)
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("%s=%s: no such command (%v)", directive, value, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s=%s: %v", directive, value, err)
			}
			if cmd.Flags().Lookup("config").Value.String() == "" {
				t.Errorf("%s=%s: --config not taken", directive, value)
			}
			seen[cmd.Name()] = true
		}
	}
	if !seen["run"] || !seen["reload"] {
		t.Errorf("commands found in the units: %v", seen)
	}
}

// scripts/install.sh copies a binary into PREFIX/bin and, run again with
// the same binary, leaves it alone.
func TestInstallScriptIsRerunnable(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; scripts/install.sh was not run")
	}
	bin, err := os.Executable() // any executable file will do
	if err != nil {
		t.Fatal(err)
	}
	prefix := t.TempDir()
	script := filepath.Join("..", "..", "scripts", "install.sh")
	for i, want := range []string{"+ mv -f ", " is up to date"} {
		out, err := exec.Command(bash, script, "--binary", bin, "--prefix", prefix, "--no-service").CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("run %d output lacks %q:\n%s", i+1, want, out)
		}
	}
	fi, err := os.Stat(filepath.Join(prefix, "bin", "vcpnode"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed binary: %v %v", fi, err)
	}
	out, err := exec.Command(bash, script, "--bogus").CombinedOutput()
	if code := exitCodeOf(err); code != 2 || !strings.Contains(string(out), "unknown option --bogus") {
		t.Errorf("unknown option: exit %d\n%s", code, out)
	}
}

func exitCodeOf(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Without systemd scripts/install.sh installs the binary, says exactly
// what to add to PATH when its directory is not there, says how to run
// the node instead of a service, and exits 0: its job is done.
func TestInstallScriptWithoutSystemd(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed; scripts/install.sh was not run")
	}
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd is the init system here: install.sh would install a service")
	}
	prefix := t.TempDir()
	cmd := exec.Command(bash, filepath.Join("..", "..", "scripts", "install.sh"), "--binary", builtBinary(t), "--prefix", prefix, "--user")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"note: " + prefix + "/bin is not on your PATH; add it, e.g. in ~/.profile:\n  export PATH=\"" + prefix + "/bin:$PATH\"\n",
		"no service installed: systemd is not the init system here",
		"Run " + prefix + "/bin/vcpnode run under the supervisor this machine has",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	cmd = exec.Command(bash, filepath.Join("..", "..", "scripts", "install.sh"), "--binary", builtBinary(t), "--prefix", prefix, "--no-service")
	cmd.Env = []string{"PATH=" + prefix + "/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "not on your PATH") {
		t.Errorf("with the directory on PATH: %v\n%s", err, out)
	}
}
