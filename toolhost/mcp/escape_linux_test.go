package mcp

import (
	"bytes"
	"context"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// A stdio server's grandchild that calls setsid (its own session
// and process group) and ignores SIGTERM is out of reach of a
// process-group kill; with a process tree it dies when the server is
// removed, restarted, crashes, or the host closes, in both Linux modes.

// escapeServer is the config of an "escape" server named name. The
// cleanup closes the host, then kills every process left that carries the
// server's marker folder in its environment (so never a stranger, whatever
// pids were reused), and fails the test if there was one.
func (f *fixture) escapeServer(name string) ServerConfig {
	f.t.Helper()
	cfg := f.stdio(name, "escape")
	token := []byte("\x00" + envMarkerDir + "=" + cfg.Env[envMarkerDir] + "\x00")
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = f.host.Close(ctx)
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			// Our environment holds no marker folder, only the servers' do.
			if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(append([]byte{0}, env...), token) {
				f.t.Errorf("process %d of server %s was left running; killing it", pid, name)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return cfg
}

// escapee starts the "escape" server named name (see escapeServer) and
// returns its grandchild's pid, alive.
func (f *fixture) escapee(name string) (ServerConfig, int) {
	f.t.Helper()
	cfg := f.escapeServer(name)
	f.start(cfg)
	if st := f.status(name); st.State != StateRunning {
		f.t.Fatalf("server %s: %+v", name, st)
	}
	return cfg, f.grandchild(name)
}

// grandchild is the pid of the escapee of server name's latest process.
func (f *fixture) grandchild(name string) int {
	f.t.Helper()
	pid, err := strconv.Atoi(f.waitMarker(name, "grandchild"))
	if err != nil {
		f.t.Fatal(err)
	}
	if proctreetest.Gone(pid) {
		f.t.Fatalf("grandchild %d is not running", pid)
	}
	return pid
}

func TestStdioServerTreeStopsASetsidGrandchild(t *testing.T) {
	for _, mode := range []proctree.Mode{proctree.ModeCgroup, proctree.ModeSubreaper} {
		// Stopping waits for the whole tree: the grandchild is gone when
		// Apply or Close returns, no polling.
		t.Run(mode.String()+"/removed", func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.ProcessTrees = proctreetest.Manager(t, mode) })
			_, grandchild := f.escapee("esc")
			server := f.pid("esc")
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := f.host.Apply(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if !proctreetest.Gone(server) || !proctreetest.Gone(grandchild) {
				t.Fatalf("after the server was removed: server %d gone %t, grandchild %d gone %t",
					server, proctreetest.Gone(server), grandchild, proctreetest.Gone(grandchild))
			}
		})
		t.Run(mode.String()+"/changed", func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.ProcessTrees = proctreetest.Manager(t, mode) })
			cfg, grandchild := f.escapee("esc")
			cfg.Env = maps.Clone(cfg.Env) // the running server's config shares the map
			cfg.Env["MCPTEST_CHANGED"] = "1"
			f.start(cfg) // a changed config restarts the server
			if !proctreetest.Gone(grandchild) {
				t.Fatalf("grandchild %d outlived the restart of its server", grandchild)
			}
			if st := f.status("esc"); st.State != StateRunning {
				t.Fatalf("after the restart: %+v", st)
			}
		})
		t.Run(mode.String()+"/host closed", func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.ProcessTrees = proctreetest.Manager(t, mode) })
			_, grandchild := f.escapee("esc")
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := f.host.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if !proctreetest.Gone(grandchild) {
				t.Fatalf("grandchild %d outlived the host", grandchild)
			}
		})
		// The server exits on its own: what it left is killed as it is
		// reaped, before the restart.
		t.Run(mode.String()+"/crashed", func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.ProcessTrees = proctreetest.Manager(t, mode) })
			_, grandchild := f.escapee("esc")
			_, err := call(context.Background(), t, f.tool("McpEsc"), map[string]any{"command": "crash"})
			if err == nil || !strings.Contains(err.Error(), "exit status 3") {
				t.Fatalf("crash: %v", err)
			}
			testwait.For(t, "the grandchild of the crashed server to end", func() bool { return proctreetest.Gone(grandchild) })
			testwait.For(t, "a restart", func() bool {
				st := f.status("esc")
				return st.State == StateRunning && st.Restarts >= 1
			})
		})
	}
}

// The host makes its own Manager when given none, and uses it.
func TestStdioServerTreeByDefault(t *testing.T) {
	f := newFixture(t)
	if f.host.o.ProcessTrees == nil {
		t.Fatal("no Manager made on Linux")
	}
	_, grandchild := f.escapee("esc")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.host.Apply(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !proctreetest.Gone(grandchild) {
		t.Fatalf("grandchild %d outlived its server", grandchild)
	}
}

// A server stopped while its first connect is finishing (it has listed
// its tools, connect has not returned) used to be left running: the
// supervisor saw its context done and returned without ending the session.
// The stop is delivered from the tool-list callback, inside that window.
func TestStdioServerStoppedAsItComesUp(t *testing.T) {
	var f *fixture
	var stopped sync.Once
	f = newFixture(t, func(o *Options) {
		o.OnChange = func(name string) {
			stopped.Do(func() {
				f.host.mu.Lock()
				s := f.host.servers[name]
				f.host.mu.Unlock()
				s.cancel() // what Apply's stop does first; waiting here would deadlock
			})
		}
	})
	f.start(f.escapeServer("esc"))
	// Both may be gone already: the stop is under way.
	server := f.pid("esc")
	grandchild, err := strconv.Atoi(f.waitMarker("esc", "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	f.host.mu.Lock()
	s := f.host.servers["esc"]
	f.host.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(waitLimit):
		t.Fatal("the supervisor did not end")
	}
	if !proctreetest.Gone(server) || !proctreetest.Gone(grandchild) {
		t.Fatalf("stopped as it came up: server %d gone %t, grandchild %d gone %t",
			server, proctreetest.Gone(server), grandchild, proctreetest.Gone(grandchild))
	}
}
