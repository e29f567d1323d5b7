package feed

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestPlaceholderCommandLeavesNothingRunning: a [placeholders] command
// whose grandchild calls setsid (its own session and process group) and
// ignores SIGTERM: commands run as process trees, so the grandchild is
// gone when the run is.
func TestPlaceholderCommandLeavesNothingRunning(t *testing.T) {
	dir := t.TempDir()
	// The token marks the grandchild (it inherits our environment), so the
	// cleanup kills nothing else.
	token := "VCPNODE_TEST_ESCAPE=" + dir
	t.Setenv("VCPNODE_TEST_ESCAPE", dir)
	cfg := config.Default()
	cfg.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Escape",
		Command: proctreetest.EscapeeScript(t, dir) + "\necho $gc", Sandbox: "scratch"}}
	// Confined like every command: its profile grants the fifo's folder.
	cfg.Sandbox.Profiles = map[string]config.SandboxSpec{"scratch": {Extends: "default", Write: []string{dir}}}
	resp, _, err := Evaluate(t.Context(), cfg, nil, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Placeholders) != 1 {
		t.Fatalf("placeholders = %+v", resp.Placeholders)
	}
	pid, err := strconv.Atoi(resp.Placeholders[0].Value)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		t.Fatalf("value %q is no grandchild pid (%v)", resp.Placeholders[0].Value, err)
	}
	// It reported the pid of its PID namespace: found by its mark, if it
	// still runs (without namespaces, that pid is its own).
	if host := proctreetest.HostPidMarked(pid, token); host != 0 {
		t.Cleanup(func() { proctreetest.KillMarked(host, token) })
		if !proctreetest.Gone(host) {
			t.Fatalf("the command's setsid grandchild %d (%d in its namespace) outlived the run", host, pid)
		}
	}
}

// TestPlaceholderCommandsRunUnderTheirProfile: a [placeholders] command
// runs under its table's sandbox profile, else [sandbox] profile: under
// default it cannot read a file the profile does not grant, and the
// failure names the profile; the same command under none reads it.
func TestPlaceholderCommandsRunUnderTheirProfile(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Placeholders.Command = []config.CommandPlaceholderConfig{
		{Name: "Confined", Command: "cat " + secret},
		{Name: "Free", Command: "cat " + secret, Sandbox: "none"},
	}
	resp, warnings, err := Evaluate(t.Context(), cfg, nil, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	values, errs := map[string]string{}, map[string]string{}
	for _, p := range resp.Placeholders {
		values[p.Key], errs[p.Key] = p.Value, p.LastError
	}
	if values["{{Free}}"] != "SECRET" {
		t.Errorf("the command under none read %q; placeholders %+v", values["{{Free}}"], resp.Placeholders)
	}
	if values["{{Confined}}"] != "" {
		t.Errorf("the command under default read %q", values["{{Confined}}"])
	}
	want := `placeholder command "Confined" was refused by the node's sandbox (profile "default")`
	if !strings.Contains(errs["{{Confined}}"], want) {
		t.Errorf("the error lacks %q: %q (warnings %q)", want, errs["{{Confined}}"], warnings)
	}
}
