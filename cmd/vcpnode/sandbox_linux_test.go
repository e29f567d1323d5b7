//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// vcpnodeProc runs this test binary as vcpnode with args, in dir, with a
// hermetic environment, and returns its exit code, stdout and stderr.
func vcpnodeProc(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, selfPath(t), args...)
	cmd.Dir, cmd.Env = dir, hermeticEnv(t, asVCPNodeEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("vcpnode %s: %v", strings.Join(args, " "), err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestSandboxRun: `vcpnode sandbox run` passes the command's exit status
// through, refuses under default a file outside every grant with a message
// naming the profile, the path and the profile that grants it, blames
// nothing on the sandbox for a command failing by itself, confines nothing under none, and names an unknown
// profile as the error.
func TestSandboxRun(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	work, private := t.TempDir(), t.TempDir()
	secret := filepath.Join(private, "secret.txt")
	if err := os.WriteFile(secret, []byte("PRIVATE\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := vcpnodeProc(t, work, "sandbox", "run", "--", "sh", "-c", "echo in > own.txt && cat own.txt && exit 7")
	if code != 7 || out != "in\n" {
		t.Errorf("exit 7 under default: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if errOut != "" {
		t.Errorf("a command failing by itself is blamed on the sandbox: %q", errOut)
	}

	code, out, errOut = vcpnodeProc(t, work, "sandbox", "run", "--", "cat", secret)
	if code != 1 || strings.Contains(out, "PRIVATE") {
		t.Errorf("cat of an ungranted file under default: code %d, stdout %q", code, out)
	}
	for _, want := range []string{
		`vcpnode: command "cat" was refused by the node's sandbox (profile "default"): read ` + secret + ": cat: " + secret + ": Permission denied",
		"[sandbox.profiles.cat]\nextends = \"default\"\nread = [\"" + private + "\"]\n",
		"--profile cat",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	code, out, errOut = vcpnodeProc(t, work, "sandbox", "run", "--profile", "none", "--", "cat", secret)
	if code != 0 || out != "PRIVATE\n" || errOut != "" {
		t.Errorf("cat under none: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = vcpnodeProc(t, work, "sandbox", "run", "--profile", "none", "--", "sh", "-c", "kill -TERM $$")
	if code != 128+15 || errOut != "" {
		t.Errorf("a command killed by SIGTERM under none: code %d (want 143), stderr %q", code, errOut)
	}

	code, out, errOut = vcpnodeProc(t, work, "sandbox", "run", "--profile", "nosuch", "--", "true")
	if code != exitError || out != "" || errOut != "vcpnode: command \"true\": unknown sandbox profile \"nosuch\"\n" {
		t.Errorf("unknown profile: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestConfigCheckSandboxNotEnforced: config check says what this machine
// cannot enforce of the profiles in use, and what status says it does not
// enforce at all, and fails with sandbox.require.
// The machine is a real one that cannot hold a cpu limit nor make
// namespaces: the check runs under `vcpnode sandbox run`, whose default
// profile keeps it from making cgroups (and cpu has no rlimit to fall back
// on) and namespaces.
func TestConfigCheckSandboxNotEnforced(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	dir := t.TempDir()
	doc := "[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"test-key\"\n\n[sandbox]\nprofile = \"capped\"\n%s\n" +
		"[sandbox.profiles.capped]\nextends = \"default\"\ncpu = 0.5\n"
	path := filepath.Join(dir, "c.toml")
	write := func(require string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(strings.Replace(doc, "%s", require, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write("")
	code, out, errOut := vcpnodeProc(t, dir, "sandbox", "run", "--", selfPath(t), "config", "check", "-c", path)
	// Then what status would say of the machine: no cgroup, so memory is
	// per process at best.
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 4 || lines[0] != "warning: not enforced on this machine for the profiles in use: PID namespace, cpu limit; sandbox.require = true would refuse to start" ||
		!strings.HasPrefix(lines[1], "warning: not enforced on this machine (as vcpnode status says): ") || !strings.Contains(lines[1], "memory limit") ||
		lines[2] != "config OK" {
		t.Errorf("confined config check: code %d, stdout %q, stderr %q", code, out, errOut)
	}

	write("require = true")
	code, out, errOut = vcpnodeProc(t, dir, "sandbox", "run", "--", selfPath(t), "config", "check", "-c", path)
	want := path + ": sandbox profiles cannot be enforced here (sandbox.require is set): not enforced for the profiles in use: PID namespace, cpu limit\n"
	if code != exitError || out != want || !strings.Contains(errOut, "1 problem") {
		t.Errorf("confined config check with require: code %d, stdout %q (want %q), stderr %q", code, out, want, errOut)
	}
}

func selfPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// TestStatusSandboxSection: `vcpnode status` has a sandbox line (the
// mechanism, its Landlock ABI, the default profile, how limits are held)
// and a "not enforced" line, and --json the same section; `tools --all
// --json` gives each tool's profile, none for a built-in one.
func TestStatusSandboxSection(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	root := t.TempDir()
	for _, name := range []string{"Probe", "Other"} {
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := `{"name":"` + name + `","pluginType":"synchronous","entryPoint":{"command":"true"}}`
		if err := os.WriteFile(filepath.Join(root, name, "plugin-manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, fmt.Sprintf(`
[plugins]
dirs = [%q]
state_dir = %q

[sandbox]
profile = "offline"

[sandbox.profiles.capped]
extends = "default"
memory = "64MiB"

[tools.Probe]
sandbox = "capped"

[tools.Echo]
sandbox = "capped"
`, root, t.TempDir()))
	d.accept()
	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	sb := st.Sandbox
	if sb == nil || sb.Mechanism != "landlock" || sb.LandlockABI < 1 || sb.Default != "offline" || sb.Require ||
		!slices.Equal(sb.Profiles, []string{"capped", "default", "none", "offline"}) || sb.Memory == "" {
		t.Fatalf("status --json sandbox = %+v", sb)
	}
	if sb.LandlockABI >= 4 && slices.ContainsFunc(sb.NotEnforced, func(s string) bool { return strings.Contains(s, "UDP") }) {
		t.Errorf("notEnforced = %q names UDP, which the syscall filter refuses", sb.NotEnforced)
	}

	_, out, _ := d.ctl("status")
	line := fmt.Sprintf(`sandbox landlock (ABI %d), default profile "offline"; limits: memory by %s`, sb.LandlockABI, sb.Memory)
	for _, l := range [][2]string{{"pids", sb.Pids}, {"cpu", sb.CPU}} {
		if l[1] != "" {
			line += ", " + l[0] + " by " + l[1]
		}
	}
	want := []string{strings.Join(strings.Fields(line), " ")}
	if len(sb.NotEnforced) > 0 {
		want = append(want, "not enforced "+strings.Join(sb.NotEnforced, ", "))
	}
	wantLines(t, out, want...)

	var tools controlapi.ToolsResponse
	d.ctlJSON(&tools, "tools", "--all")
	profiles := map[string]string{}
	for _, ts := range tools.Tools {
		profiles[ts.Name] = ts.Sandbox
	}
	if profiles["Probe"] != "capped" || profiles["Other"] != "offline" || profiles["Echo"] != "" || profiles["NodeInfo"] != "" {
		t.Errorf("tools --all --json profiles = %v, want Probe capped, Other offline (the default), none for built-ins", profiles)
	}
}
