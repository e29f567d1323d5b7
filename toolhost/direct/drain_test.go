package direct

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/outpipe"
)

// TestOutputReaderTakesWhatThePipeHeldAtTheDrainDeadline: the drain
// deadline after the host's exit bounds the wait for a descendant that
// holds stderr, never what is already in the pipe. A reader the machine
// ran only after the deadline still reads the host's last stderr line,
// the one that explains its exit.
func TestOutputReaderTakesWhatThePipeHeldAtTheDrainDeadline(t *testing.T) {
	ours, theirs, err := outpipe.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	defer theirs.Close() // a descendant still holds it
	last := "Error: Cannot find module 'left-pad'"
	if _, err := theirs.WriteString("loading\n" + strings.Repeat("noise\n", 2000) + last + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := ours.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	p := &proc{log: zerolog.Nop()}
	p.readers.Add(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.logOutput(ours, "stderr")
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("the reader did not end at the passed deadline")
	}
	p.mu.Lock()
	got := p.errs.String()
	p.mu.Unlock()
	if !strings.Contains(got, last) {
		t.Errorf("stderr summary %q lacks the host's last line %q", got, last)
	}
}
