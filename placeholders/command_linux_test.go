package placeholders

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// A command's grandchild that calls setsid (its own session and
// process group) and ignores SIGTERM is out of reach of a process-group
// kill; with a process tree it is stopped at the timeout and when the
// shell exits, in both Linux modes.

// escapeEnv marks the test's processes, so the cleanup kills only its own.
const escapeEnv = "PLACEHOLDERS_ESCAPE_TEST"

// escapeCommand is a command whose shell starts proctreetest's escapee (a
// grandchild that calls setsid, ignores SIGTERM and sleeps); once it runs
// the shell prints "started", writes its pid to <dir>/pid and runs then.
// The grandchild is killed at cleanup if still there.
func escapeCommand(t *testing.T, dir, then string) (Command, string) {
	t.Helper()
	pidFile := filepath.Join(dir, "pid")
	line := proctreetest.EscapeeScript(t, dir) + fmt.Sprintf(`
echo started; echo $gc > %[1]s.tmp; mv %[1]s.tmp %[1]s; %[2]s`, pidFile, then)
	token := escapeEnv + "=" + dir
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidFile); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			proctreetest.KillMarked(pid, token)
		}
	})
	return Command{Placeholder: "Escape", Line: line, Env: append(os.Environ(), token)}, pidFile
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestCommandTreeStopsASetsidGrandchild(t *testing.T) {
	for _, mode := range []proctree.Mode{proctree.ModeCgroup, proctree.ModeSubreaper} {
		t.Run(mode.String()+"/shell exits", func(t *testing.T) {
			c, pidFile := escapeCommand(t, t.TempDir(), "")
			c.Trees = proctreetest.Manager(t, mode)
			out, err := c.Run(context.Background())
			if err != nil || out.Text != "started\n" {
				t.Fatalf("Run = %+v, %v", out, err)
			}
			// Run returns once the tree is empty: no waiting here.
			if pid := readPidFile(t, pidFile); !proctreetest.Gone(pid) {
				t.Fatalf("grandchild %d outlived the run", pid)
			}
		})
		t.Run(mode.String()+"/timeout", func(t *testing.T) {
			c, pidFile := escapeCommand(t, t.TempDir(), "wait")
			c.Trees = proctreetest.Manager(t, mode)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			// The run's deadline, delivered once the grandchild exists (a
			// timer would race the start of the processes on a loaded machine).
			go func() {
				testwait.For(t, "the pid file", func() bool { _, err := os.Stat(pidFile); return err == nil || ctx.Err() != nil })
				cancel(context.DeadlineExceeded)
			}()
			out, err := c.Run(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish") {
				t.Fatalf("err = %v, want a deadline error", err)
			}
			if out.Text != "started\n" {
				t.Fatalf("output so far = %q", out.Text)
			}
			if pid := readPidFile(t, pidFile); !proctreetest.Gone(pid) {
				t.Fatalf("grandchild %d outlived the run", pid)
			}
		})
	}
}

// Without a tree (process trees unsupported) the process group is all that
// is stopped: the setsid grandchild survives. This pins what the fallback
// does, and that the tests above would see an escape.
func TestCommandWithoutTreeMissesASetsidGrandchild(t *testing.T) {
	c, pidFile := escapeCommand(t, t.TempDir(), "")
	out, err := c.Run(context.Background())
	if err != nil || out.Text != "started\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if pid := readPidFile(t, pidFile); proctreetest.Gone(pid) {
		t.Fatalf("grandchild %d is gone; a process-group kill should not reach it", pid)
	}
}
