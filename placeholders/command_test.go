//go:build unix

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
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

func TestCommandRun(t *testing.T) {
	cases := []struct {
		name      string
		cmd       Command
		want      string
		truncated bool
		errHas    string
	}{
		{"stdout is the value", Command{Line: "echo main; echo two >&2"}, "main\n", false, ""},
		{"stdin is /dev/null", Command{Line: "cat; echo done"}, "done\n", false, ""},
		{"dir and env", Command{Line: `pwd; echo "$PH_TEST"`, Dir: "/", Env: []string{"PH_TEST=v"}}, "/\nv\n", false, ""},
		{"output capped", Command{Line: "printf 0123456789", OutputLimit: 4}, "0123", true, ""},
		{"exit status with stderr", Command{Line: "echo partial; echo 'no such  branch' >&2; exit 3"}, "partial\n", false, `exited with status 3: no such branch`},
		{"exit status without stderr", Command{Line: "exit 1"}, "", false, "no error output"},
		{"background child holding stdout", Command{Line: "echo v; sleep 30 &"}, "v\n", false, ""},
	}
	trees, err := proctree.New(proctree.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer trees.Close()
	for _, tracked := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/tree %t", c.name, tracked), func(t *testing.T) {
				if tracked {
					c.cmd.Trees = trees
				}
				out, err := c.cmd.Run(context.Background())
				if c.errHas == "" && err != nil {
					t.Fatalf("Run: %v", err)
				}
				if c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)) {
					t.Fatalf("err = %v, want it to contain %q", err, c.errHas)
				}
				if out.Text != c.want || out.Truncated != c.truncated {
					t.Fatalf("out = %+v, want %q (truncated %v)", out, c.want, c.truncated)
				}
			})
		}
	}
}

func TestCommandTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The grandchild would outlive a kill of the shell alone. The pid file appears (by rename, whole) only after "started" is
	// printed; the run's context ends then, as its timeout would, so the
	// test does not depend on the shell getting that far within a window.
	c := Command{Placeholder: "Slow", Line: "sleep 60 & echo started; echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; wait"}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		wait, stop := context.WithTimeout(ctx, testWait)
		defer stop()
		if testwait.Poll(wait, func() bool { _, err := os.Stat(pidFile); return err == nil }) {
			cancel(context.DeadlineExceeded)
		} else {
			cancel(errors.New("the shell never wrote its pid file"))
		}
	}()
	out, err := c.Run(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("err = %v, want a deadline error", err)
	}
	if out.Text != "started\n" {
		t.Fatalf("output so far = %q", out.Text)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the grandchild to be gone", func() bool { return proctreetest.Gone(pid) })
}

func TestCommandAsJob(t *testing.T) {
	store := NewStore()
	r := NewRefresher(store, discardLogger(), Options{})
	t.Cleanup(r.Stop)
	c := &Command{Placeholder: "DevBoxGitBranch", Line: "printf '  main\\n'"}
	if c.Name() != "command DevBoxGitBranch" {
		t.Fatalf("Name = %q", c.Name())
	}
	changed := store.Changed()
	if _, err := r.Update([]Job{{Source: c, Timeout: testWait}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(testWait):
		t.Fatal("the command never set its placeholder")
	}
	if snap, _ := store.Snapshot(); snap["{{DevBoxGitBranch}}"] != "main" {
		t.Fatalf("snapshot = %v", snap)
	}
}

func TestCommandKillsLeftovers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The shell exits at once; its background child keeps stdout open.
	c := Command{Line: "sleep 60 & echo $! > " + pidFile + "; echo v"}
	out, err := c.Run(context.Background())
	if err != nil || out.Text != "v\n" {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the grandchild to be gone", func() bool { return proctreetest.Gone(pid) })
}
