package placeholders

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// confinedCommand is a command run under profile, with home as the user's
// home directory and dir its own folder. It skips, saying why, where
// Landlock is missing.
func confinedCommand(t testing.TB, profile, home, dir, line string) *Command {
	t.Helper()
	trees := proctreetest.Manager(t, proctree.ModeAuto)
	sb, err := sandbox.New(sandbox.Options{Home: home, TempDir: t.TempDir(), Trees: trees,
		Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.NeedFiles(t, sb.Capabilities())
	return &Command{Placeholder: "Probe", Line: line, Dir: dir, Trees: trees, Sandbox: sb, Profile: profile}
}

// TestSandboxConfinesCommand: under default a placeholder command reads
// its own folder but not a file in the home directory, and the failure
// names the profile; under none the same read succeeds. The shell is gone
// after the run.
func TestSandboxConfinesCommand(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("SECRET-KEY-MATERIAL"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "own.txt"), []byte("OWN"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	own, err := confinedCommand(t, "default", home, dir, "echo $$; cat own.txt").Run(ctx)
	if err != nil || !strings.HasSuffix(own.Text, "\nOWN") {
		t.Fatalf("reading its own folder under default: %q %v", own.Text, err)
	}
	pid, err := strconv.Atoi(strings.SplitN(own.Text, "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	// The pid of its PID namespace, where it ran in dir.
	if !proctreetest.GoneIn(pid, dir) {
		t.Errorf("the shell %d outlived its run", pid)
	}

	_, err = confinedCommand(t, "default", home, dir, fmt.Sprintf("cat %q", secret)).Run(ctx)
	if err == nil {
		t.Fatal("read the home directory under default")
	}
	for _, want := range []string{`placeholder command "Probe" was refused by the node's sandbox (profile "default"): read ` + secret, "Permission denied",
		"[sandbox.profiles.probe]\nextends = \"default\"\nread = [", "[[placeholders.command]]\nname = \"Probe\"\nsandbox = \"probe\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	t.Logf("the error: %v", err)

	free, err := confinedCommand(t, "none", home, dir, fmt.Sprintf("cat %q", secret)).Run(ctx)
	if err != nil || free.Text != "SECRET-KEY-MATERIAL" {
		t.Errorf("under none: %q %v", free.Text, err)
	}
}
