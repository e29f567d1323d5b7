package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// Bounds of the outbox: past them a plugin's callback is refused (the
// plugin sees a 503 and may retry) rather than filling the disk.
const (
	outboxMaxMessages = 10_000
	outboxMaxBytes    = 1 << 30
	outboxSeqDigits   = 20
	outboxTempPrefix  = ".tmp-"
	// A session sends at most this much per turn of its loop, so that a long
	// backlog does not hold up pings and results.
	outboxBatchMessages = 32
	outboxBatchBytes    = 8 * config.MiB
)

// ErrFull means the outbox holds as many callbacks as it may: the main
// server has been unreachable for a long time.
var ErrFull = errors.New("outbox full")

// errCorruptMessage marks a stored message that can never be sent, as
// opposed to one that could not be read this time.
var errCorruptMessage = errors.New("corrupt outbox message")

// Box is one state directory's outbox. Deliver stores; the connected
// session calls Rewind when it starts, Drain to write what waits, Mark for
// the payload of its pings and Confirm with the payload of each pong.
// Drain, Rewind, Mark, Confirm and Waiting accept a nil *Box: the node
// without plugins has no outbox.
type Box struct {
	dir, badDir string
	log         zerolog.Logger
	maxMessages int
	maxBytes    int64

	mu    sync.Mutex // serialises writes, so sequence order is disk order
	seq   uint64     // the last sequence number used
	count int
	size  int64
	// queue holds the waiting messages' file names in sequence order: the
	// directory is listed once, at open, so draining a backlog of n
	// messages costs O(n), not a listing per batch.
	queue []string
	head  int // queue[:head] are sent; compacted as it grows
	// inflight are written on the current connection and not yet
	// confirmed, in order; they come before queue[head:].
	inflight []sentMessage
	gen      uint64 // counts connections, so a stale pong confirms nothing

	drainMu sync.Mutex // one drain at a time, so nothing is sent twice

	ready chan<- struct{} // gets a token when there may be something to send
	lock  *os.File        // held while the outbox is open: one daemon per state dir
	// movedTo is the outbox MoveTo handed everything to: Deliver stores
	// there from then on.
	movedTo *Box
}

// Open creates <stateDir>/outbox (0700) if needed, removes what a crash
// left half-written, and counts what is waiting. ready (buffered) gets a
// token whenever there is something to send.
func Open(stateDir string, ready chan<- struct{}, log zerolog.Logger) (*Box, error) {
	o := &Box{
		dir:         filepath.Join(stateDir, "outbox"),
		log:         log,
		maxMessages: outboxMaxMessages,
		maxBytes:    outboxMaxBytes,
		ready:       ready,
	}
	o.badDir = filepath.Join(o.dir, "bad")
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox: create %s: %w (set [plugins] state_dir to a writable directory)", o.dir, err)
	}
	lock, err := lockStateDir(stateDir)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	o.lock = lock
	entries, err := outboxReadDir(o.dir)
	if err != nil {
		o.Close() // another daemon (or a retry) may take the state dir
		return nil, fmt.Errorf("outbox: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch seq, ok := outboxSeq(name); {
		case strings.HasPrefix(name, outboxTempPrefix):
			// Never renamed into place: the plugin was not told "received".
			_ = os.Remove(filepath.Join(o.dir, name))
		case ok && e.Type().IsRegular():
			o.seq = max(o.seq, seq)
			o.queue = append(o.queue, name) // ReadDir sorts by name: sequence order
			o.count++
			if info, err := e.Info(); err == nil {
				o.size += info.Size()
			}
		}
	}
	if o.count > 0 {
		log.Info().Int("messages", o.count).Str("dir", o.dir).Msg("outbox holds callbacks from before; they are sent once connected")
		o.signal()
	}
	return o, nil
}

// outboxReadDir lists the outbox at open (a variable so tests can count
// listings and make one fail).
var outboxReadDir = os.ReadDir

// Close releases the state directory for another daemon. Messages stay on
// disk for the next one.
func (o *Box) Close() {
	if o.lock != nil {
		o.lock.Close()
	}
}

// outboxSeq parses the sequence number of a message file name.
func outboxSeq(name string) (uint64, bool) {
	if len(name) < outboxSeqDigits+len("-.json") || name[outboxSeqDigits] != '-' || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	seq, err := strconv.ParseUint(name[:outboxSeqDigits], 10, 64)
	return seq, err == nil
}

func (o *Box) signal() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// Deliver stores one callback durably (file and directory synced) and
// returns only then. It implements plugin.CallbackSink.
func (o *Box) Deliver(ctx context.Context, pluginName, taskID string, body json.RawMessage) error {
	if !plugin.ValidCallbackName(pluginName) || !plugin.ValidTaskID(taskID) {
		return fmt.Errorf("outbox: invalid plugin name %q or task id %q", pluginName, taskID)
	}
	o.mu.Lock()
	if dst := o.movedTo; dst != nil {
		o.mu.Unlock()
		return dst.Deliver(ctx, pluginName, taskID, body)
	}
	defer o.mu.Unlock()
	if o.count >= o.maxMessages || o.size+int64(len(body)) > o.maxBytes {
		return fmt.Errorf("%w: %d messages (%s) are waiting for the main server, the limit is %d messages or %s",
			ErrFull, o.count, config.HumanBytes(o.size), o.maxMessages, config.HumanBytes(o.maxBytes))
	}
	o.seq++ // used even if the write fails, so a name is never reused
	name := fmt.Sprintf("%0*d-%s-%s.json", outboxSeqDigits, o.seq, pluginName, taskID)
	placed, err := writeDurably(o.dir, name, body)
	if placed {
		// Even if syncing the directory failed: the file is there and will be sent.
		o.queue = append(o.queue, name)
		o.count++
		o.size += int64(len(body))
		o.signal()
	}
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// writeDurably writes data to dir/name through a temporary file, so that
// the name only ever holds complete data, and syncs both. placed reports
// whether the file got its name.
func writeDurably(dir, name string, data []byte) (placed bool, err error) {
	f, err := os.CreateTemp(dir, outboxTempPrefix+"*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Drain sends the stored messages in order through send, keeping each as
// written (until confirm) once send succeeded, up to one batch; if more
// wait, it signals ready again. A message that cannot be read back is moved
// to outbox/bad and skipped; one removed from the disk by someone else is
// skipped. It stops at the first send error, keeping that message and the
// rest for the next connection.
func (o *Box) Drain(send func(json.RawMessage) error) error {
	if o == nil {
		return nil
	}
	o.drainMu.Lock()
	defer o.drainMu.Unlock()
	sentN, sentBytes := 0, int64(0)
	for {
		name, ok := o.next()
		if !ok {
			return nil
		}
		if sentN >= outboxBatchMessages || sentBytes >= outboxBatchBytes {
			o.signal() // the rest on the next turn
			return nil
		}
		path := filepath.Join(o.dir, name)
		body, size, err := readOutboxMessage(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			o.pop()
			o.forget(0)
			o.log.Warn().Str("file", path).Msg("a callback disappeared from the outbox before it was sent")
			continue
		case errors.Is(err, errCorruptMessage):
			o.pop()
			o.quarantine(name, size, err)
			continue
		case err != nil:
			// Perhaps passing (out of file descriptors): keep the order and
			// try again at the next callback or connection.
			o.log.Error().Err(err).Str("file", path).Msg("cannot read a callback from the outbox; it waits")
			return nil
		}
		if err := send(body); err != nil {
			return err
		}
		o.pop()
		o.written(name, size)
		sentN++
		sentBytes += size
		o.log.Debug().Str("file", name).Msg("callback written to the main server; kept until a pong confirms it")
	}
}

// sentMessage is a callback written and not yet confirmed.
type sentMessage struct {
	name string
	seq  uint64
	size int64
}

// written records a message as written on the current connection.
func (o *Box) written(name string, size int64) {
	seq, _ := outboxSeq(name)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inflight = append(o.inflight, sentMessage{name: name, seq: seq, size: size})
}

// Rewind starts a new connection: what the last one wrote unconfirmed is
// sent again, first and in order.
func (o *Box) Rewind() {
	if o == nil {
		return
	}
	o.drainMu.Lock()
	defer o.drainMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gen++
	if len(o.inflight) == 0 {
		return
	}
	queue := make([]string, 0, len(o.inflight)+len(o.queue)-o.head)
	for _, m := range o.inflight {
		queue = append(queue, m.name)
	}
	o.queue = append(queue, o.queue[o.head:]...)
	o.head = 0
	o.inflight = nil
}

// outboxMarkPrefix starts the payload of a ping that confirms callbacks.
const outboxMarkPrefix = "cb:"

// Mark is the payload for a ping that, once answered, confirms every
// callback written so far on this connection; "" when none waits.
func (o *Box) Mark() string {
	if o == nil {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.inflight) == 0 {
		return ""
	}
	return fmt.Sprintf("%s%d:%d", outboxMarkPrefix, o.gen, o.inflight[len(o.inflight)-1].seq)
}

// Confirm takes the payload of a pong: the callbacks up to its mark were
// read by the server and are deleted. Other payloads are ignored.
func (o *Box) Confirm(payload string) {
	if o == nil {
		return
	}
	gen, seq, ok := strings.Cut(strings.TrimPrefix(payload, outboxMarkPrefix), ":")
	g, gerr := strconv.ParseUint(gen, 10, 64)
	n, serr := strconv.ParseUint(seq, 10, 64)
	if !ok || !strings.HasPrefix(payload, outboxMarkPrefix) || gerr != nil || serr != nil {
		return
	}
	o.mu.Lock()
	if g != o.gen {
		o.mu.Unlock()
		return
	}
	i := 0
	for i < len(o.inflight) && o.inflight[i].seq <= n {
		i++
	}
	done := slices.Clone(o.inflight[:i])
	o.inflight = o.inflight[i:]
	o.mu.Unlock()
	for _, m := range done {
		path := filepath.Join(o.dir, m.name)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			// Delivered; the file stays and is sent again after a restart
			// (the server overwrites the same result file).
			o.log.Warn().Err(err).Str("file", path).Msg("a callback reached the main server but cannot be deleted from the outbox")
		}
		o.forget(m.size)
		o.log.Debug().Str("file", m.name).Msg("callback confirmed by the main server")
	}
}

// next is the oldest waiting message's file name.
func (o *Box) next() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.head >= len(o.queue) {
		return "", false
	}
	return o.queue[o.head], true
}

// pop drops the oldest waiting message from the queue.
func (o *Box) pop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queue[o.head] = ""
	o.head++
	if o.head >= 1024 && o.head*2 >= len(o.queue) { // compact: amortised O(1)
		o.queue = append(o.queue[:0], o.queue[o.head:]...)
		o.head = 0
	}
}

// readOutboxMessage reads a stored callback and checks it is what Deliver
// wrote: a JSON object naming a valid plugin and task.
func readOutboxMessage(path string) (json.RawMessage, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, plugin.MaxCallbackBytes+1))
	size := int64(len(data))
	if info, serr := f.Stat(); serr == nil {
		size = info.Size()
	}
	switch {
	case err != nil:
		return nil, size, err
	case size > plugin.MaxCallbackBytes:
		return nil, size, fmt.Errorf("%w: %d bytes, more than a callback may hold", errCorruptMessage, size)
	}
	var names struct {
		PluginName string `json:"pluginName"`
		TaskID     string `json:"taskId"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, size, fmt.Errorf("%w: not a JSON object", errCorruptMessage)
	}
	if err := json.Unmarshal(trimmed, &names); err != nil {
		return nil, size, fmt.Errorf("%w: not valid JSON: %v", errCorruptMessage, err)
	}
	if !plugin.ValidCallbackName(names.PluginName) || !plugin.ValidTaskID(names.TaskID) {
		return nil, size, fmt.Errorf("%w: pluginName %q or taskId %q missing or invalid", errCorruptMessage, names.PluginName, names.TaskID)
	}
	return trimmed, size, nil
}

// quarantine moves an unreadable message aside so it never blocks the rest.
func (o *Box) quarantine(name string, size int64, why error) {
	from := filepath.Join(o.dir, name)
	to := filepath.Join(o.badDir, name)
	if _, err := os.Lstat(to); err == nil {
		// Sequence numbers restart once the outbox was empty at start.
		to = fmt.Sprintf("%s.%d", to, time.Now().UnixNano())
	}
	err := os.MkdirAll(o.badDir, 0o700)
	if err == nil {
		err = os.Rename(from, to)
	}
	if err != nil {
		o.log.Error().Err(err).Str("file", from).AnErr("problem", why).Msg("cannot move a corrupt outbox message aside; deleting it")
		if rmErr := os.Remove(from); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			return // still counted: it is still there
		}
	} else {
		o.log.Warn().Str("file", from).Str("moved_to", o.badDir).AnErr("problem", why).Msg("corrupt outbox message moved aside; the others are still sent")
	}
	o.forget(size)
}

func (o *Box) forget(size int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.count = max(o.count-1, 0)
	o.size = max(o.size-size, 0)
}

// Waiting is the number of stored messages, written or not, until the
// server confirmed them; for status and tests.
func (o *Box) Waiting() int {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.count
}
