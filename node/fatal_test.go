package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A panic in a goroutine Run owns (here the session's decoder, through
// the beforeDecode seam) is a fatal stop: Run shuts down as on a signal
// (the call in flight is answered, every plugin process and MCP server is
// stopped) and returns an error naming what failed, so that `vcpnode run`
// exits non-zero and the service manager restarts it.
func TestPanicIsAFatalStopThatRunReturns(t *testing.T) {
	needCommands(t, "sh")
	plugins := t.TempDir()
	writePlugin(t, plugins, "Sleeper", `{"name":"Sleeper","pluginType":"synchronous","description":"sleeps",
"entryPoint":{"command":"sh sleep.sh"},"communication":{"protocol":"stdio","timeout":60000}}`,
		map[string]string{"sleep.sh": "cat >/dev/null; echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 60\n"})
	mcpDir := t.TempDir()
	exe, env := stdioMCPServer(t, mcpDir)
	var boom atomic.Bool
	opt := pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"one": {Command: exe, Env: env, Cwd: mcpDir}}
		c.Node.ShutdownGrace = config.Duration(4 * time.Second)
	})
	opt.timings = func(tm *timings) {
		tm.killReserve = time.Second
		tm.BeforeDecode = func(int) {
			if boom.Load() {
				panic("injected decoder failure")
			}
		}
	}
	h := startHarness(t, opt)
	c := h.accept()
	registered(t, h, c)
	mcpPid := alivePid(t, filepath.Join(mcpDir, "pid"))
	sleeping := asyncCall(h, c, "s-1", "Sleeper", nil)
	pidFile := filepath.Join(plugins, "Sleeper", "pid")
	h.waitUntil("the plugin to start", func() bool { _, err := os.Stat(pidFile); return err == nil })
	sleeperPid := alivePid(t, pidFile)

	boom.Store(true)
	if err := c.Send(h.ctx, wsproto.CancelTool{RequestID: "nothing"}); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-h.stopped:
		close(h.stopped) // the harness's own shutdown then finds Run over
	case <-h.ctx.Done():
		t.Fatal("Run did not return after a panic in its decoder")
	}
	if err == nil || !strings.Contains(err.Error(), "session decoder panicked: injected decoder failure") {
		t.Fatalf("Run = %v, want the decoder's panic", err)
	}
	if res := waitResult(h, sleeping); res.Status != wsproto.StatusError {
		t.Errorf("the call in flight was answered %+v, want an error", res)
	}
	if n := h.node.PluginProcesses(); n != 0 {
		t.Errorf("%d plugin processes after the fatal stop", n)
	}
	for what, pid := range map[string]int{"the plugin": sleeperPid, "the MCP server": mcpPid} {
		if err := signalPid(pid, syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("%s (pid %d) still runs after the fatal stop: %v", what, pid, err)
		}
	}
	if s, _ := h.node.State(); s.Phase != PhaseStopped {
		t.Errorf("phase %s after Run returned", s.Phase)
	}
	h.waitLog(`"stack":"goroutine`)
}

// panicSource is a placeholder source whose run panics.
type panicSource struct{}

func (panicSource) Name() string           { return "Broken" }
func (panicSource) Placeholders() []string { return []string{"{{Broken}}"} }
func (panicSource) Run(context.Context) (placeholders.Output, error) {
	panic("injected source failure")
}

// A panic in a placeholder source's run (node code in the refresher's
// goroutine) is a fatal stop too.
func TestPanicInAPlaceholderSourceStopsRun(t *testing.T) {
	hub, err := demohub.Start(demohub.Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	cfg := config.Default()
	cfg.Hub.URL, cfg.Hub.Key = hub.BaseURL(), testKey
	src := func(config.Config, zerolog.Logger) ([]placeholders.Job, []string, error) {
		return []placeholders.Job{{Source: panicSource{}, Fingerprint: "broken"}}, nil, nil
	}
	n, err := New(cfg, zerolog.Nop(), withTimings(testTimings()), WithGetenv(noEnv(t)),
		WithPlaceholderSource(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Run(ctx); err == nil || !strings.Contains(err.Error(), "placeholder source Broken panicked: injected source failure") {
		t.Fatalf("Run = %v, want the source's panic", err)
	}
	if ctx.Err() != nil {
		t.Error("Run returned only because the test's deadline passed")
	}
}
