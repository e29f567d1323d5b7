package plugin

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/outpipe"
)

// TestCaptureReadsWhatThePipeHeldAtTheDrainDeadline: the drain deadline
// after a leader's exit bounds the wait for a descendant's output, never
// what is already in the pipe. A reader that fell behind (a loaded machine
// did not schedule it before the deadline) still gets every byte the
// leader wrote; the descendant that holds the write end open does not
// make it wait.
func TestCaptureReadsWhatThePipeHeldAtTheDrainDeadline(t *testing.T) {
	testReadsWhatThePipeHeldAtTheDeadline(t)
}

func testReadsWhatThePipeHeldAtTheDeadline(t *testing.T) {
	for _, size := range []int{1, 8363, 60 << 10} {
		ours, theirs, err := outpipe.New()
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if _, err := theirs.Write(want); err != nil {
			t.Fatal(err)
		}
		// The deadline passed before the reader ran; theirs stays open.
		if err := ours.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		c := &capture{max: 16 << 10, tailMax: 1 << 10}
		done := make(chan error, 1)
		go func() { done <- c.readFrom(ours) }()
		select {
		case err = <-done:
		case <-time.After(waitLimit):
			t.Fatalf("%d bytes: the read did not end at the passed deadline", size)
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%d bytes: error %v, want the deadline", size, err)
		}
		kept := min(size, c.max)
		if c.total != int64(size) || !bytes.Equal(c.buf, want[:kept]) {
			t.Errorf("%d bytes written, %d read (%d kept)", size, c.total, len(c.buf))
		}
		if tail := c.tailBytes(); size > c.max && !bytes.Equal(tail, want[size-c.tailMax:]) {
			t.Errorf("%d bytes: tail %q…", size, tail[:min(len(tail), 20)])
		}
		ours.Close()
		theirs.Close()
	}
}
