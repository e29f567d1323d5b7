package outbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// messageFiles lists the message files in stateDir's outbox.
func messageFiles(t *testing.T, stateDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(stateDir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if _, ok := outboxSeq(e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestMoveToKeepsEveryCallback: callbacks written and unconfirmed, and
// callbacks waiting, move to another state directory's outbox behind what
// it already holds, in order; none stays behind, a pong to the old
// outbox's ping confirms none of them, and a callback stored through the
// old outbox afterwards lands in the new one.
func TestMoveToKeepsEveryCallback(t *testing.T) {
	oldState, newState := t.TempDir(), t.TempDir()
	from, _, _ := openTestOutbox(t, oldState)
	for _, task := range []string{"sent-1", "sent-2", "waiting-1"} {
		deliver(t, from, "P", task)
	}
	// A connection writes two and has not seen the pong yet.
	from.Rewind()
	var written int
	if err := from.Drain(func(json.RawMessage) error {
		if written == 2 {
			return os.ErrDeadlineExceeded // the connection is gone: the rest waits
		}
		written++
		return nil
	}); err == nil {
		t.Fatal("the drain did not stop at the send error")
	}
	oldMark := from.Mark()
	if oldMark == "" {
		t.Fatal("no mark for the written callbacks")
	}

	// The new state directory holds one from an earlier run.
	earlier, _, _ := openTestOutbox(t, newState)
	deliver(t, earlier, "P", "earlier")
	earlier.Close()
	to, ready, _ := openTestOutbox(t, newState)
	hasToken(ready)

	moved, err := from.MoveTo(to)
	if err != nil || moved != 3 {
		t.Fatalf("MoveTo = %d, %v; want 3 moved", moved, err)
	}
	if left := messageFiles(t, oldState); len(left) != 0 {
		t.Errorf("left in the old outbox: %v", left)
	}
	if from.Waiting() != 0 || from.Mark() != "" || to.Waiting() != 4 {
		t.Errorf("waiting old %d (mark %q), new %d; want 0, none, 4", from.Waiting(), from.Mark(), to.Waiting())
	}
	if !hasToken(ready) {
		t.Error("the new outbox did not signal that it has something to send")
	}
	deliver(t, from, "P", "after")
	to.Confirm(oldMark)
	if got, want := drainAll(t, to), []string{"earlier", "sent-1", "sent-2", "waiting-1", "after"}; !slices.Equal(got, want) {
		t.Errorf("the new outbox sent %v, want %v", got, want)
	}
	if left := messageFiles(t, newState); len(left) != 0 {
		t.Errorf("left in the new outbox after the confirmations: %v", left)
	}
}

// TestMoveToCopiesWhatItCannotRename: where a rename fails, as it does
// across file systems, the message is copied whole and the original goes;
// where the copy fails too, the original stays.
func TestMoveToCopiesWhatItCannotRename(t *testing.T) {
	renameMessage = func(string, string) error { return syscall.EXDEV }
	t.Cleanup(func() { renameMessage = os.Rename })
	oldState, newState := t.TempDir(), t.TempDir()
	from, _, _ := openTestOutbox(t, oldState)
	deliver(t, from, "P", "copied")
	to, _, _ := openTestOutbox(t, newState)
	if moved, err := from.MoveTo(to); err != nil || moved != 1 {
		t.Fatalf("MoveTo = %d, %v; want 1 moved", moved, err)
	}
	if left := messageFiles(t, oldState); len(left) != 0 {
		t.Errorf("left in the old outbox: %v", left)
	}
	if got := drainAll(t, to); !slices.Equal(got, []string{"copied"}) {
		t.Errorf("the new outbox sent %v", got)
	}

	src := filepath.Join(t.TempDir(), "1-P-t.json")
	if err := os.WriteFile(src, []byte(`{"pluginName":"P","taskId":"t"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, placed, err := moveMessage(src, filepath.Join(t.TempDir(), "missing"), "x.json"); placed || err == nil {
		t.Errorf("moved into a missing directory: placed %v, %v", placed, err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("the original went although no copy was placed: %v", err)
	}
}
