//go:build unix

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestPackageRunnerFirstStartGetsTheFetchBudget: a server started through
// npx that is still fetching its package when InitTimeout passes is not
// killed and restarted: its first start has FetchTimeout. Once it ran, a
// start that hangs is cut at InitTimeout again, and says so.
func TestPackageRunnerFirstStartGetsTheFetchBudget(t *testing.T) {
	const initTimeout = 200 * time.Millisecond
	f := newFixture(t, func(o *Options) { o.InitTimeout, o.FetchTimeout = initTimeout, waitLimit })
	cfg := f.stdio("fetch", "gated")
	gate := filepath.Join(f.dir, "fetch", "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	npx := filepath.Join(t.TempDir(), "npx") // the runner, as its name tells
	if err := os.Symlink(cfg.Command, npx); err != nil {
		t.Fatal(err)
	}
	cfg.Command, cfg.Args = npx, []string{"-y", "@example/server-fetch"}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.host.Apply(ctx, []ServerConfig{cfg}); err != nil {
		t.Fatal(err)
	}
	pid := f.pid("fetch") // started, and "downloading" until the gate opens
	if st := f.status("fetch"); st.StartBudget != "up to 30s (a first start through npx, which may be downloading the package)" {
		t.Errorf("status while starting says %q of its budget", st.StartBudget)
	}

	// Watched for longer than a start cut at InitTimeout would take to be
	// stopped (stdin closed, stopGrace, SIGTERM): it must go on, unkilled.
	watch := time.NewTimer(stopGrace + 5*initTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
watching:
	for {
		select {
		case <-watch.C:
			break watching
		case <-tick.C:
			if st := f.status("fetch"); st.State != StateStarting || st.Restarts != 0 || !alive(pid) {
				t.Fatalf("a first start through npx was cut short: %+v", st)
			}
		}
	}
	open := func() {
		g, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
	}
	open()
	testwait.For(t, "the server to run", func() bool { return f.status("fetch").State == StateRunning })
	if st := f.status("fetch"); st.Restarts != 0 || st.StartBudget != "" {
		t.Errorf("restarted on the way, or a budget shown while running: %+v", st)
	}

	// It ran: the package is cached; a start that hangs now is cut at InitTimeout.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a hanging restart to be cut at InitTimeout", func() bool {
		return strings.Contains(f.status("fetch").LastError, "no answer to initialize and tools/list within 200ms")
	})
	if st := f.status("fetch"); strings.Contains(st.LastError, "first start") {
		t.Errorf("a restart after the first run is not a first start: %+v", st)
	}
}
