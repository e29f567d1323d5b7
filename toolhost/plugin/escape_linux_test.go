package plugin

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// A plugin's grandchild that calls setsid (leaving the plugin's
// session and process group), is orphaned and ignores SIGTERM must still
// end with the call's timeout, with cancel_tool and with shutdown, in both
// Linux modes (a cgroup per run; the subreaper walk when no cgroup can be
// made). On macOS the process group is all there is; see proctree.

// escapeTree waits for the fake plugin's leader and grandchild (the child
// in between has exited by then) and returns their pids.
func escapeTree(t *testing.T, dir string) (leader, grandchild int) {
	t.Helper()
	leader = waitPidFile(t, filepath.Join(dir, "leader.pid"))
	grandchild = waitPidFile(t, filepath.Join(dir, "grandchild.pid"))
	if _, ppid, ok := procStat(grandchild); !ok || ppid == leader {
		t.Fatalf("grandchild %d should be an orphan (found %v, parent %d)", grandchild, ok, ppid)
	}
	return leader, grandchild
}

func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		testwait.For(t, "process "+strconv.Itoa(pid)+" to end", func() bool { return proctreetest.Collected(pid) })
	}
}

func TestSyncPluginTreeIsStoppedWhateverItDoes(t *testing.T) {
	cancelled := errors.New("cancel_tool from the server")
	stops := []struct {
		name    string
		stop    func(h *Host, cancel context.CancelCauseFunc)
		wantErr error
	}{
		// The dispatcher's deadline, delivered once the tree exists (a real
		// timer would race the start of three processes on a loaded machine).
		{"timeout", func(_ *Host, cancel context.CancelCauseFunc) { cancel(context.DeadlineExceeded) }, context.DeadlineExceeded},
		{"cancel", func(_ *Host, cancel context.CancelCauseFunc) { cancel(cancelled) }, cancelled},
		{"shutdown", func(h *Host, _ context.CancelCauseFunc) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				_ = h.Close(ctx) // checked below: Running and the pids
			}()
		}, ErrClosed},
	}
	for _, mode := range []proctree.Mode{proctree.ModeCgroup, proctree.ModeSubreaper} {
		for _, s := range stops {
			t.Run(mode.String()+"/"+s.name, func(t *testing.T) {
				trees := proctreetest.Manager(t, mode)
				root := pluginRoot(t)
				dir := escapePlugin(t, root, "synchronous", "hang")
				h := newHost(t, Options{KillGrace: 200 * time.Millisecond, ProcessTrees: trees})
				tool := findTool(t, scan(t, h, root), "Escape")
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				done := make(chan error, 1)
				go func() {
					_, err := call(ctx, tool, map[string]string{"x": "y"})
					done <- err
				}()
				leader, grandchild := escapeTree(t, dir)
				s.stop(h, cancel)
				select {
				case err := <-done:
					if !errors.Is(err, s.wantErr) {
						t.Fatalf("error %v, want %v", err, s.wantErr)
					}
				case <-time.After(waitLimit):
					t.Fatal("Invoke did not return after the stop")
				}
				assertGone(t, leader, grandchild)
				testwait.For(t, "the host to let the run go", func() bool { return h.Running() == 0 })
				if h.Kills() != 1 {
					t.Errorf("Kills() = %d, want 1", h.Kills())
				}
			})
		}
	}
}

// TestAsyncPluginTreeOutlivingItsLeader: the leader answers and exits; the
// setsid grandchild keeps running, is watched, and is stopped at the
// runtime cap and at shutdown.
func TestAsyncPluginTreeOutlivingItsLeader(t *testing.T) {
	for _, mode := range []proctree.Mode{proctree.ModeCgroup, proctree.ModeSubreaper} {
		for _, stop := range []string{"runtime cap", "shutdown"} {
			t.Run(mode.String()+"/"+stop, func(t *testing.T) {
				trees := proctreetest.Manager(t, mode)
				root := pluginRoot(t)
				dir := escapePlugin(t, root, "asynchronous", "answer")
				opts := Options{KillGrace: 200 * time.Millisecond, ProcessTrees: trees, CallbackBaseURL: testCallbackURL}
				if stop == "runtime cap" {
					// Counted from the start; the pids are written before the
					// answer, so the cap cannot win a race against them.
					opts.AsyncMaxRuntime = time.Second
				}
				h := newHost(t, opts)
				res, err := call(context.Background(), findTool(t, scan(t, h, root), "Escape"), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := textOf(t, res); got != "accepted; the grandchild keeps working" {
					t.Fatalf("answer %q", got)
				}
				leader, grandchild := escapeTree(t, dir)
				if stop == "shutdown" {
					if proctreetest.Collected(grandchild) || h.Running() != 1 {
						t.Fatalf("the grandchild should be running and watched (gone %v, running %d)", proctreetest.Collected(grandchild), h.Running())
					}
					ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
					defer cancel()
					if err := h.Close(ctx); err != nil {
						t.Fatal(err)
					}
				}
				assertGone(t, leader, grandchild)
				testwait.For(t, "the host to let the run go", func() bool { return h.Running() == 0 })
				if h.Kills() != 1 {
					t.Errorf("Kills() = %d, want 1", h.Kills())
				}
			})
		}
	}
}
