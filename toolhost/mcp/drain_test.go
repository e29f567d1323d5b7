package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/outpipe"
)

// TestStdoutDrainKeepsWhatThePipeHeld: when a server has exited and its
// last messages were not read within drainWait (the session's reader was
// late; a grandchild still holds stdout), the drain ends the wait for more
// but not the read of what the pipe holds: every message the server wrote
// reaches the session, and the end is not reported as a read failure.
func TestStdoutDrainKeepsWhatThePipeHeld(t *testing.T) {
	ours, theirs, err := outpipe.New()
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close() // the grandchild's copy
	var want bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"result":{"text":"%0200d"}}`+"\n", i, i)
	}
	if _, err := theirs.Write(want.Bytes()); err != nil {
		t.Fatal(err)
	}
	l := newLineFilter(ours, 1<<20, func([]byte) { t.Error("a message read as garbage") })
	defer l.Close()
	l.drain() // before the reader ran at all
	done := make(chan []byte, 1)
	go func() {
		got, _ := io.ReadAll(l)
		done <- got
	}()
	select {
	case got := <-done:
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("the session read %d bytes of the %d the server wrote", len(got), want.Len())
		}
	case <-time.After(waitLimit):
		t.Fatal("the reader did not end at the drain")
	}
	if err := l.failure(); err != nil {
		t.Errorf("the drain read as a failure: %v", err)
	}
}

// TestExitReasonKeepsWhatStderrHeld: a server that dies at its start
// says why on stderr; the stderr reader runs only once the drain deadline
// after its exit has passed (a loaded machine did not schedule it
// before). Its last words are still read, and the server's status quotes
// them with its exit status.
func TestExitReasonKeepsWhatStderrHeld(t *testing.T) {
	released := make(chan struct{})
	var once sync.Once
	holdStderr = func() { <-released }
	stderrDrainSet = func(deadline time.Time) {
		once.Do(func() {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				testwait.Poll(ctx, func() bool { return time.Now().After(deadline) })
				close(released)
			}()
		})
	}
	t.Cleanup(func() { holdStderr, stderrDrainSet = func() {}, func(time.Time) {} })
	f := newFixture(t, func(o *Options) { o.Backoff = func(int) time.Duration { return time.Hour } })
	f.start(f.stdio("dies", "dies"))
	if st := f.status("dies"); !strings.Contains(st.LastError, "exit status 2: fatal: cannot open /nonexistent/db") {
		t.Errorf("status = %+v, want the exit status and the server's last words", st)
	}
}
