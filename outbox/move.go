package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// MoveTo hands every callback o holds to dst, the outbox of another state
// directory (a reload changed [plugins] state_dir): first the ones written
// on the current connection and not yet confirmed, then the waiting ones,
// in order, after what dst already holds. Each file is renamed into dst's
// directory under dst's next sequence number (copied, then removed, where
// a rename cannot cross file systems). The unconfirmed ones are sent again
// from dst, on this connection too, so delivery stays at least once; a
// pong to one of o's pings confirms nothing in dst. From then on Deliver
// on o stores into dst and o has nothing to send; the caller closes o.
// A file that can be moved neither way stays where it is, and the error
// names it.
func (o *Box) MoveTo(dst *Box) (moved int, err error) {
	// Drains first, then the queues, in this order everywhere.
	o.drainMu.Lock()
	defer o.drainMu.Unlock()
	dst.drainMu.Lock()
	defer dst.drainMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	dst.mu.Lock()
	defer dst.mu.Unlock()

	names := make([]string, 0, len(o.inflight)+len(o.queue)-o.head)
	for _, m := range o.inflight {
		names = append(names, m.name)
	}
	names = append(names, o.queue[o.head:]...)
	var errs []error
	for _, name := range names {
		dst.seq++ // used even if the move fails, so a name is never reused
		to := fmt.Sprintf("%0*d%s", outboxSeqDigits, dst.seq, name[outboxSeqDigits:])
		size, placed, err := moveMessage(filepath.Join(o.dir, name), dst.dir, to)
		if err != nil && !errors.Is(err, os.ErrNotExist) { // a vanished one: Drain would skip it too
			errs = append(errs, fmt.Errorf("outbox: move %s to %s: %w", filepath.Join(o.dir, name), dst.dir, err))
		}
		if !placed {
			continue
		}
		dst.queue = append(dst.queue, to)
		dst.count++
		dst.size += size
		moved++
	}
	for _, dir := range []string{dst.dir, o.dir} {
		if err := syncDir(dir); err != nil {
			errs = append(errs, fmt.Errorf("outbox: %w", err))
		}
	}
	o.queue, o.head, o.inflight, o.count, o.size = nil, 0, nil, 0, 0
	o.movedTo = dst
	dst.gen = max(dst.gen, o.gen+1)
	if moved > 0 {
		dst.signal()
	}
	return moved, errors.Join(errs...)
}

// renameMessage is os.Rename (a variable so tests can make it fail as it
// does across file systems).
var renameMessage = os.Rename

// moveMessage moves the message file from into dir under name: placed
// when the file is there (even if err then says what else went wrong).
func moveMessage(from, dir, name string) (size int64, placed bool, err error) {
	info, err := os.Stat(from)
	if err != nil {
		return 0, false, err
	}
	if err := renameMessage(from, filepath.Join(dir, name)); err == nil {
		return info.Size(), true, nil
	}
	// Another file system (or a rename refused for another reason): a
	// durable copy, then the original goes. A crash in between leaves
	// both, and both are sent: at least once.
	data, err := os.ReadFile(from)
	if err != nil {
		return 0, false, err
	}
	if placed, err := writeDurably(dir, name, data); !placed {
		return 0, false, err
	}
	if err := os.Remove(from); err != nil && !errors.Is(err, os.ErrNotExist) {
		return int64(len(data)), true, fmt.Errorf("copied, but the original stays: %w", err)
	}
	return int64(len(data)), true, nil
}
