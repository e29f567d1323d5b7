package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testlog"
)

func openTestOutbox(t *testing.T, stateDir string) (*Box, chan struct{}, *testlog.Buffer) {
	t.Helper()
	ready := make(chan struct{}, 1)
	logs := &testlog.Buffer{}
	o, err := Open(stateDir, ready, zerolog.New(logs))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(o.Close)
	return o, ready, logs
}

func callbackBody(plugin, task string, extra string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"pluginName":%q,"taskId":%q,"message":%q}`, plugin, task, extra))
}

func deliver(t *testing.T, o *Box, plugin, task string) {
	t.Helper()
	if err := o.Deliver(context.Background(), plugin, task, callbackBody(plugin, task, "result of "+task)); err != nil {
		t.Fatalf("Deliver(%s, %s): %v", plugin, task, err)
	}
}

// drainAll drains until nothing is left, each batch confirmed as a pong
// would, and returns the task ids sent, in order.
func drainAll(t *testing.T, o *Box) []string {
	t.Helper()
	var tasks []string
	for range 1000 {
		before := len(tasks)
		err := o.Drain(func(body json.RawMessage) error {
			var m struct{ TaskID string }
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("drained %s: %v", body, err)
			}
			tasks = append(tasks, m.TaskID)
			return nil
		})
		if err != nil {
			t.Fatalf("drain: %v", err)
		}
		o.Confirm(o.Mark())
		if len(tasks) == before {
			return tasks
		}
	}
	t.Fatal("drain never finished")
	return nil
}

func hasToken(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestOutboxDeliversInOrderAndDeletes(t *testing.T) {
	state := t.TempDir()
	o, ready, _ := openTestOutbox(t, state)
	if hasToken(ready) {
		t.Error("an empty outbox signalled ready")
	}
	for _, task := range []string{"t1", "t2", "t3"} {
		deliver(t, o, "VideoGen", task)
	}
	if !hasToken(ready) {
		t.Error("Deliver did not signal ready")
	}
	info, err := os.Stat(filepath.Join(state, "outbox"))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("outbox dir: %v, mode %v, want 0700", err, info.Mode().Perm())
	}
	names := fileNames(t, filepath.Join(state, "outbox"))
	want := []string{"00000000000000000001-VideoGen-t1.json", "00000000000000000002-VideoGen-t2.json", "00000000000000000003-VideoGen-t3.json"}
	if !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	if got := drainAll(t, o); !slices.Equal(got, []string{"t1", "t2", "t3"}) {
		t.Errorf("drained %v, want t1 t2 t3", got)
	}
	if names := fileNames(t, filepath.Join(state, "outbox")); len(names) != 0 {
		t.Errorf("files left after draining: %v", names)
	}
	if o.Waiting() != 0 {
		t.Errorf("waiting = %d after draining", o.Waiting())
	}
}

func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestOutboxSurvivesReopening(t *testing.T) {
	state := t.TempDir()
	o, _, _ := openTestOutbox(t, state)
	deliver(t, o, "VideoGen", "before1")
	deliver(t, o, "Wan2.1VideoGen", "before2")
	// A crash between writing and renaming leaves a temporary file behind.
	if err := os.WriteFile(filepath.Join(state, "outbox", outboxTempPrefix+"123"), []byte(`{"half`), 0o600); err != nil {
		t.Fatal(err)
	}

	o.Close() // the daemon stops; the next one takes over its state dir
	again, ready, logs := openTestOutbox(t, state)
	if !hasToken(ready) {
		t.Error("reopening an outbox with messages did not signal ready")
	}
	if again.Waiting() != 2 {
		t.Errorf("waiting = %d, want 2", again.Waiting())
	}
	if !strings.Contains(logs.String(), "callbacks from before") {
		t.Errorf("no log about the waiting callbacks: %s", logs)
	}
	deliver(t, again, "VideoGen", "after")
	if got := drainAll(t, again); !slices.Equal(got, []string{"before1", "before2", "after"}) {
		t.Errorf("drained %v, want the old ones first, then the new one", got)
	}
	if _, err := os.Stat(filepath.Join(state, "outbox", outboxTempPrefix+"123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file was not removed: %v", err)
	}
}

func TestOutboxMovesCorruptMessagesAside(t *testing.T) {
	tests := []struct {
		name, content, problem string
	}{
		{"not JSON", `{"pluginName":"VideoGen",`, "not valid JSON"},
		{"an array", `[1,2]`, "not a JSON object"},
		{"empty", ``, "not a JSON object"},
		{"no task id", `{"pluginName":"VideoGen"}`, "missing or invalid"},
		{"bad plugin name", `{"pluginName":"../x","taskId":"t"}`, "missing or invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			o, _, logs := openTestOutbox(t, state)
			deliver(t, o, "VideoGen", "first")
			deliver(t, o, "VideoGen", "broken")
			deliver(t, o, "VideoGen", "last")
			broken := filepath.Join(state, "outbox", "00000000000000000002-VideoGen-broken.json")
			if err := os.WriteFile(broken, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := drainAll(t, o); !slices.Equal(got, []string{"first", "last"}) {
				t.Errorf("drained %v, want first and last", got)
			}
			if _, err := os.Stat(filepath.Join(state, "outbox", "bad", filepath.Base(broken))); err != nil {
				t.Errorf("the corrupt message is not in outbox/bad: %v", err)
			}
			if !strings.Contains(logs.String(), "corrupt outbox message moved aside") || !strings.Contains(logs.String(), tt.problem) {
				t.Errorf("log lacks the warning and %q:\n%s", tt.problem, logs)
			}
			if o.Waiting() != 0 {
				t.Errorf("waiting = %d", o.Waiting())
			}
		})
	}
}

func TestOutboxKeepsWhatCouldNotBeSent(t *testing.T) {
	o, _, _ := openTestOutbox(t, t.TempDir())
	deliver(t, o, "VideoGen", "t1")
	deliver(t, o, "VideoGen", "t2")
	errWrite := errors.New("write: broken pipe")
	var sent int
	err := o.Drain(func(json.RawMessage) error {
		if sent++; sent == 2 {
			return errWrite
		}
		return nil
	})
	if !errors.Is(err, errWrite) {
		t.Fatalf("drain = %v, want the send error", err)
	}
	if got := drainAll(t, o); !slices.Equal(got, []string{"t2"}) {
		t.Errorf("the next drain sent %v, want t2 again", got)
	}
}

func TestOutboxIsBounded(t *testing.T) {
	tests := []struct {
		name        string
		maxMessages int
		maxBytes    int64
	}{
		{"by count", 2, outboxMaxBytes},
		{"by size", outboxMaxMessages, int64(2 * len(callbackBody("VideoGen", "tX", "result of tX")))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := openTestOutbox(t, t.TempDir())
			o.maxMessages, o.maxBytes = tt.maxMessages, tt.maxBytes
			deliver(t, o, "VideoGen", "t1")
			deliver(t, o, "VideoGen", "t2")
			err := o.Deliver(context.Background(), "VideoGen", "t3", callbackBody("VideoGen", "t3", "result of t3"))
			if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "2 messages") {
				t.Fatalf("third Deliver = %v, want ErrFull saying how many wait", err)
			}
			if got := drainAll(t, o); !slices.Equal(got, []string{"t1", "t2"}) {
				t.Errorf("drained %v", got)
			}
			deliver(t, o, "VideoGen", "t3") // room again
		})
	}
}

func TestOutboxSendsInBatches(t *testing.T) {
	o, ready, _ := openTestOutbox(t, t.TempDir())
	n := outboxBatchMessages + 3
	for i := range n {
		deliver(t, o, "VideoGen", fmt.Sprintf("t%03d", i))
	}
	hasToken(ready)
	var sent []string
	if err := o.Drain(func(b json.RawMessage) error { sent = append(sent, string(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(sent) != outboxBatchMessages {
		t.Errorf("one drain sent %d, want one batch of %d", len(sent), outboxBatchMessages)
	}
	if !hasToken(ready) {
		t.Error("a partial drain did not signal ready for the rest")
	}
	if rest := drainAll(t, o); len(rest) != 3 || rest[0] != fmt.Sprintf("t%03d", outboxBatchMessages) {
		t.Errorf("the rest = %v", rest)
	}
}

func TestOutboxRefusesBadNames(t *testing.T) {
	o, _, _ := openTestOutbox(t, t.TempDir())
	for _, names := range [][2]string{{"../etc", "t1"}, {"VideoGen", "a/b"}, {"", "t"}, {"VideoGen", "t.1"}} {
		if err := o.Deliver(context.Background(), names[0], names[1], json.RawMessage(`{}`)); err == nil {
			t.Errorf("Deliver(%q, %q) was accepted", names[0], names[1])
		}
	}
	if o.Waiting() != 0 {
		t.Errorf("waiting = %d", o.Waiting())
	}
}

func TestOutboxNeedsAWritableStateDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(file, make(chan struct{}, 1), zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "state_dir") {
		t.Errorf("Open under a file = %v, want an error naming state_dir", err)
	}
}

func TestOutboxKeepsEarlierCorruptMessages(t *testing.T) {
	state := t.TempDir()
	o, _, _ := openTestOutbox(t, state)
	deliver(t, o, "VideoGen", "t1")
	name := "00000000000000000001-VideoGen-t1.json"
	bad := filepath.Join(state, "outbox", "bad")
	if err := os.MkdirAll(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, name), []byte("from an earlier run"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "outbox", name), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := drainAll(t, o); len(got) != 0 {
		t.Errorf("drained %v", got)
	}
	names := fileNames(t, bad)
	if len(names) != 2 || names[0] != name || !strings.HasPrefix(names[1], name+".") {
		t.Errorf("outbox/bad holds %v, want the earlier file and the new one beside it", names)
	}
}

// TestOutboxRefusesASecondDaemon: two daemons on one state dir would race
// to send and delete the same messages; the second is refused, clearly.
func TestOutboxRefusesASecondDaemon(t *testing.T) {
	state := t.TempDir()
	first, _, _ := openTestOutbox(t, state)
	_, err := Open(state, make(chan struct{}, 1), zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "in use by another vcpnode") || !strings.Contains(err.Error(), "state_dir") {
		t.Fatalf("second open = %v, want a refusal naming state_dir", err)
	}
	first.Close()
	second, err := Open(state, make(chan struct{}, 1), zerolog.Nop())
	if err != nil {
		t.Fatalf("open after the first closed: %v", err)
	}
	second.Close()
}

// fillOutbox writes n valid messages straight into <state>/outbox, as a
// previous daemon would have left them.
func fillOutbox(t testing.TB, state string, n int) {
	t.Helper()
	dir := filepath.Join(state, "outbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		task := fmt.Sprintf("t%05d", i)
		name := fmt.Sprintf("%0*d-VideoGen-%s.json", outboxSeqDigits, i, task)
		if err := os.WriteFile(filepath.Join(dir, name), callbackBody("VideoGen", task, "r"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// countReadDir counts the outbox's directory listings during a test.
func countReadDir(t *testing.T, fail error) *int {
	t.Helper()
	n := new(int)
	prev := outboxReadDir
	outboxReadDir = func(dir string) ([]os.DirEntry, error) {
		*n++
		if fail != nil {
			return nil, fail
		}
		return prev(dir)
	}
	t.Cleanup(func() { outboxReadDir = prev })
	return n
}

// TestOutboxDrainsABacklogWithOneListing: draining a backlog of many
// batches costs one directory listing (at open), not one per batch, which
// made a 10k backlog quadratic; order and new arrivals are kept.
func TestOutboxDrainsABacklogWithOneListing(t *testing.T) {
	state := t.TempDir()
	const backlog = 20*outboxBatchMessages + 5
	fillOutbox(t, state, backlog)
	listings := countReadDir(t, nil)
	o, _, _ := openTestOutbox(t, state)
	deliver(t, o, "VideoGen", "t99999") // arrives after the backlog
	got := drainAll(t, o)
	if len(got) != backlog+1 || got[0] != "t00001" || got[backlog-1] != fmt.Sprintf("t%05d", backlog) || got[backlog] != "t99999" {
		t.Fatalf("drained %d messages: first %v, last %v", len(got), got[:min(2, len(got))], got[max(0, len(got)-2):])
	}
	if *listings != 1 {
		t.Errorf("the outbox directory was listed %d times for %d batches; want once, at open", *listings, backlog/outboxBatchMessages+1)
	}
	if o.Waiting() != 0 || len(fileNames(t, filepath.Join(state, "outbox"))) != 0 {
		t.Errorf("after draining: waiting %d, files %v", o.Waiting(), fileNames(t, filepath.Join(state, "outbox")))
	}
}

// TestOpenOutboxReleasesTheLockOnError: an open that fails after taking
// the state-dir lock releases it, so the next attempt is not refused as
// "in use by another vcpnode".
func TestOpenOutboxReleasesTheLockOnError(t *testing.T) {
	state := t.TempDir()
	listErr := errors.New("input/output error")
	countReadDir(t, listErr) // restored at cleanup
	if _, err := Open(state, make(chan struct{}, 1), zerolog.Nop()); !errors.Is(err, listErr) {
		t.Fatalf("open with a failing listing = %v", err)
	}
	outboxReadDir = os.ReadDir
	o, err := Open(state, make(chan struct{}, 1), zerolog.Nop())
	if err != nil {
		t.Fatalf("open after a failed open: %v", err)
	}
	o.Close()
}

// TestOutboxSkipsAMessageRemovedBehindItsBack: a file deleted by hand is
// skipped, not waited for forever.
func TestOutboxSkipsAMessageRemovedBehindItsBack(t *testing.T) {
	state := t.TempDir()
	o, _, _ := openTestOutbox(t, state)
	deliver(t, o, "VideoGen", "t1")
	deliver(t, o, "VideoGen", "t2")
	if err := os.Remove(filepath.Join(state, "outbox", fmt.Sprintf("%0*d-VideoGen-t1.json", outboxSeqDigits, 1))); err != nil {
		t.Fatal(err)
	}
	if got := drainAll(t, o); !slices.Equal(got, []string{"t2"}) {
		t.Fatalf("drained %v, want t2", got)
	}
}

// drainOnce sends one batch without confirming it, like a connection whose
// server has gone silent, and returns the task ids written.
func drainOnce(t *testing.T, o *Box) []string {
	t.Helper()
	var tasks []string
	if err := o.Drain(func(body json.RawMessage) error {
		var m struct{ TaskID string }
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("drained %s: %v", body, err)
		}
		tasks = append(tasks, m.TaskID)
		return nil
	}); err != nil {
		t.Fatalf("drain: %v", err)
	}
	return tasks
}

// TestOutboxResendsWhatNoPongConfirmed: a written callback stays until a pong
// to a later mark confirms it; a new connection sends the unconfirmed ones
// first, in order; a pong from an earlier connection confirms nothing; the
// unconfirmed ones survive a restart.
func TestOutboxResendsWhatNoPongConfirmed(t *testing.T) {
	state := t.TempDir()
	o, _, _ := openTestOutbox(t, state)
	o.Rewind() // the first connection
	deliver(t, o, "VideoGen", "t1")
	deliver(t, o, "VideoGen", "t2")
	if got := drainOnce(t, o); !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("first drain sent %v", got)
	}
	confirmed := o.Mark()
	deliver(t, o, "VideoGen", "t3")
	drainOnce(t, o)
	stale := o.Mark()
	o.Confirm(confirmed) // the pong to the ping written after t2
	if o.Waiting() != 1 || len(fileNames(t, filepath.Join(state, "outbox"))) != 1 {
		t.Fatalf("after confirming t1 t2: waiting %d, files %v", o.Waiting(), fileNames(t, filepath.Join(state, "outbox")))
	}

	o.Rewind() // the connection died silently; a new one
	o.Confirm(stale)
	if o.Waiting() != 1 {
		t.Fatalf("a pong from the old connection confirmed t3: waiting %d", o.Waiting())
	}
	deliver(t, o, "VideoGen", "t4")
	if got := drainOnce(t, o); !slices.Equal(got, []string{"t3", "t4"}) {
		t.Fatalf("the new connection sent %v, want t3 again, then t4", got)
	}

	o.Close() // the daemon restarts before any pong
	again, _, _ := openTestOutbox(t, state)
	again.Rewind()
	if got := drainAll(t, again); !slices.Equal(got, []string{"t3", "t4"}) {
		t.Errorf("after a restart the outbox sent %v, want the unconfirmed t3 t4", got)
	}
	if again.Waiting() != 0 || len(fileNames(t, filepath.Join(state, "outbox"))) != 0 {
		t.Errorf("after confirming: waiting %d, files %v", again.Waiting(), fileNames(t, filepath.Join(state, "outbox")))
	}
}
