package outpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// waitLimit bounds a read that must end at once: far above any scheduling
// delay, far below a hung test.
const waitLimit = 10 * time.Second

// readAllWithin reads r to its end in a goroutine, failing the test when
// that takes longer than waitLimit.
func readAllWithin(t *testing.T, r io.Reader) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-time.After(waitLimit):
		t.Fatal("the read did not end at the passed deadline")
		return nil, nil
	}
}

// TestReaderTakesWhatThePipeHeldAtAPassedDeadline: a reader that runs only
// after the deadline passed (a loaded machine did not schedule it) still
// gets every byte written before, though the writer keeps the pipe open.
// The bare pipe returns the deadline with nothing read.
func TestReaderTakesWhatThePipeHeldAtAPassedDeadline(t *testing.T) {
	for _, size := range []int{1, 8363, 60 << 10} {
		ours, theirs, err := New()
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if _, err := theirs.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := ours.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if n, err := ours.Read(make([]byte, 1)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the bare pipe read %d bytes (%v) past its deadline; the test would prove nothing", n, err)
		}
		got, err := readAllWithin(t, NewReader(ours))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%d bytes: error %v, want the deadline", size, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes written, %d read", size, len(got))
		}
		ours.Close()
		theirs.Close()
	}
}

// TestReaderIsNotHeldByAWriterThatGoesOn: past the deadline the reader
// takes what the pipe held then, not what a writer adds afterwards, so a
// descendant that never stops printing cannot hold it.
func TestReaderIsNotHeldByAWriterThatGoesOn(t *testing.T) {
	ours, theirs, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	first := bytes.Repeat([]byte("x"), 1000)
	if _, err := theirs.Write(first); err != nil {
		t.Fatal(err)
	}
	if err := ours.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		chunk := bytes.Repeat([]byte("y"), 512)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := theirs.Write(chunk); err != nil {
				return // ours closed
			}
		}
	}()
	got, err := readAllWithin(t, NewReader(ours))
	close(stop)
	ours.Close() // the writer's next write fails, if it waits on a full pipe
	<-wrote
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("error %v, want the deadline", err)
	}
	if !bytes.HasPrefix(got, first) || len(got) > 64<<10 {
		t.Errorf("read %d bytes, want the first %d and at most a pipe's worth", len(got), len(first))
	}
}

// TestReaderReadsToTheEnd: without a deadline the reader is the pipe: every
// byte, then EOF once the writer closed.
func TestReaderReadsToTheEnd(t *testing.T) {
	ours, theirs, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	want := bytes.Repeat([]byte("z"), 200<<10)
	go func() {
		_, _ = theirs.Write(want)
		theirs.Close()
	}()
	got, err := readAllWithin(t, NewReader(ours))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d of %d bytes, %v", len(got), len(want), err)
	}
}
