//go:build unix

package placeholders

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// TestCommandKeepsWhatThePipeHeldAtTheDrainDeadline: the shell prints its
// value, leaves a background child holding stdout and stderr, and exits.
// The readers run only once the drain deadline has passed (a loaded
// machine did not schedule them before): every byte of the value and the
// stderr line that explains the exit status still count, and the child
// does not hold the run.
func TestCommandKeepsWhatThePipeHeldAtTheDrainDeadline(t *testing.T) {
	value := strings.Repeat("0123456789abcdef", 2000) // 32000 bytes, more than one read
	passed := make(chan struct{})
	holdOutput = func() { <-passed }
	drainSet = func(deadline time.Time) {
		testwait.For(t, "the drain deadline to pass", func() bool { return time.Now().After(deadline) })
		close(passed)
	}
	t.Cleanup(func() { holdOutput, drainSet = func() {}, func(time.Time) {} })
	for _, mode := range []string{"tree", "group"} {
		t.Run(mode, func(t *testing.T) {
			passed = make(chan struct{})
			pidFile := filepath.Join(t.TempDir(), "pid")
			c := Command{Line: fmt.Sprintf("printf %s; echo 'the last word' >&2; sleep 60 & echo $! > %s; exit 3", value, pidFile)}
			if mode == "tree" {
				c.Trees = proctreetest.Manager(t, proctree.ModeAuto)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testWait)
			defer cancel()
			out, err := c.Run(ctx)
			if err == nil || !strings.Contains(err.Error(), "exited with status 3: the last word") {
				t.Errorf("Run: %v, want the exit status and the stderr line", err)
			}
			if out.Text != value {
				t.Errorf("value: %d bytes of %d", len(out.Text), len(value))
			}
			data, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			if _, err := fmt.Sscan(string(data), &pid); err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "the background child to be gone", func() bool { return proctreetest.Gone(pid) })
		})
	}
}
