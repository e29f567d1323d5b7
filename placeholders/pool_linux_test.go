package placeholders

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// TestPooledCommandGetsOnlyItsFds: once commands come often, a confined
// placeholder command starts in a launcher that was waiting for it (the
// run takes one from the pool), holds fds 0 to 2 alone, ends with its exit
// status and output as a launcher started for it gives them, and leaves
// nothing running.
func TestPooledCommandGetsOnlyItsFds(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	c := confinedCommand(t, "default", home, dir, "true")
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	for range 2 { // the second call within a while fills the pool
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, "the pool to fill", func() bool { return c.Sandbox.WaitingLaunchers() == 2 })
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Line = `for f in /proc/$$/fd/*; do [ -e "$f" ] && printf "%s " "${f##*/}"; done; ` +
		`sleep 60 >/dev/null 2>&1 & echo $! > bg; read x < ./go; echo "$x" >&2; exit 7`
	type result struct {
		out Output
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.Run(ctx)
		done <- result{out, err}
	}()
	// It runs in a launcher that waited: one fewer waits until it ends.
	testwait.For(t, "the command to take a waiting launcher", func() bool { return c.Sandbox.WaitingLaunchers() == 1 })
	var w *os.File
	testwait.For(t, "the command to read the fifo", func() bool {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.ENXIO) {
			return false // no reader yet
		}
		if err != nil {
			t.Fatal(err)
		}
		w = f
		return true
	})
	// The command waits on the fifo, its background child running.
	data, err := os.ReadFile(filepath.Join(dir, "bg"))
	if err != nil {
		t.Fatal(err)
	}
	bg, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || proctreetest.HostPid(bg, dir) == 0 {
		t.Fatalf("no background child %q running (%v)", data, err)
	}
	if _, err := w.WriteString("released\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := <-done
	if r.err == nil || !strings.Contains(r.err.Error(), "exited with status 7: released") {
		t.Errorf("Run: %v, want exit status 7 and its stderr", r.err)
	}
	if got := strings.Fields(r.out.Text); strings.Join(got, " ") != "0 1 2" {
		t.Errorf("the command holds fds %v, want 0 1 2", got)
	}
	// Run returns once the tree is empty.
	if !proctreetest.GoneIn(bg, dir) {
		t.Errorf("the background child %d outlived its run", bg)
	}
}

// TestPooledCommandAsUser: the same for a daemon run by an ordinary user,
// whose launchers start in a user namespace of their own.
func TestPooledCommandAsUser(t *testing.T) {
	testuser.Rerun(t, "^TestPooledCommandGetsOnlyItsFds$")
}
