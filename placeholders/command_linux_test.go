package placeholders

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// Issue 10: a command's grandchild that calls setsid (its own session and
// process group) and ignores SIGTERM is out of reach of a process-group
// kill; with a process tree it is stopped at the timeout and when the
// shell exits, in both Linux modes.

// escapeEnv marks the test's processes, so the cleanup kills only its own.
const escapeEnv = "PLACEHOLDERS_ESCAPE_TEST"

// escapeCommand is a command whose shell starts a grandchild that calls
// setsid, ignores SIGTERM and sleeps; once it runs (a fifo: nothing polls)
// the shell prints "started", writes its pid to <dir>/pid and runs then. The grandchild is killed at cleanup if still there.
func escapeCommand(t *testing.T, dir, then string) (Command, string) {
	t.Helper()
	if strings.ContainsAny(dir, " '\"$\\`") {
		t.Skipf("temporary directory %q would need shell quoting", dir)
	}
	fifo, pidFile := filepath.Join(dir, "fifo"), filepath.Join(dir, "pid")
	line := fmt.Sprintf(`mkfifo %[1]s || exit 9
setsid sh -c 'trap "" TERM; echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 &
read gc < %[1]s; echo started; echo $gc > %[2]s.tmp; mv %[2]s.tmp %[2]s; %[3]s`, fifo, pidFile, then)
	token := escapeEnv + "=" + dir
	t.Cleanup(func() { killIfOurs(pidFile, token) })
	return Command{Placeholder: "Escape", Line: line, Env: append(os.Environ(), token)}, pidFile
}

// killIfOurs kills the process named in pidFile if its environment holds
// token (the pid cannot have been reused by a stranger then).
func killIfOurs(pidFile, token string) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err == nil && bytes.Contains(env, []byte("\x00"+token+"\x00")) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
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
