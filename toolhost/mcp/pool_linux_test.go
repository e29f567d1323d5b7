package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestRestartedServerStartsInAWaitingLauncher: a confined stdio server
// that crashes and is restarted, again and again, starts in a launcher
// that was waiting for it (the restart takes one from the pool), holds
// fds 0 to 2 alone, answers as before, and its crash still reads as its
// exit status and last words.
func TestRestartedServerStartsInAWaitingLauncher(t *testing.T) {
	trees := proctreetest.Manager(t, proctree.ModeAuto)
	sb, err := sandbox.New(sandbox.Options{Home: t.TempDir(), TempDir: t.TempDir(), Trees: trees,
		Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.NeedFiles(t, sb.Capabilities())
	f := newFixture(t, func(o *Options) {
		o.ProcessTrees, o.Sandbox = trees, sb
		o.Backoff = func(int) time.Duration { return 0 }
	})
	f.start(f.probe("pooled", "default"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	crash := func() {
		t.Helper()
		before := f.pid("pooled")
		_, err := call(ctx, t, f.tool("McpPooled"), map[string]any{"command": "crash"})
		if err == nil || !strings.Contains(err.Error(), "stopped during the call: exit status 3: panic: crashing on purpose") {
			t.Fatalf("crash: %v", err)
		}
		testwait.For(t, "the server to restart", func() bool {
			return f.pid("pooled") != before && f.status("pooled").State == StateRunning
		})
	}
	// The first restart comes soon after the start: from then on a
	// server's end leaves launchers waiting for the next start.
	crash()
	crash()
	testwait.For(t, "the restart to have taken a waiting launcher", func() bool { return sb.WaitingLaunchers() == 1 })
	res, err := call(ctx, t, f.tool("McpPooled"), map[string]any{"command": "fds"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "[0 1 2]" {
		t.Errorf("the restarted server holds fds %s, want [0 1 2]", got)
	}
}

// TestRestartedServerAsUser: the same for a daemon run by an ordinary
// user, whose launchers start in a user namespace of their own.
func TestRestartedServerAsUser(t *testing.T) {
	testuser.Rerun(t, "^TestRestartedServerStartsInAWaitingLauncher$")
}
