package main

import (
	"io"
	"sync"
)

// lineWriter writes log lines to w in as few write(2)s as there are bursts.
// A line that finds no write under way is written at once by its caller, as
// before; lines that arrive while one is being written are queued, and a
// goroutine that lives only while the queue is not empty writes them out in
// batches. So an idle node writes each line without delay, a busy one a
// batch per write, and no caller waits for another's lines. Lines are never
// split or reordered; flush waits until every line written so far is out.
type lineWriter struct {
	w io.Writer

	mu      sync.Mutex
	writing bool   // a write is under way; whoever does it drains the queue
	queue   []byte // lines waiting, in order
	spare   []byte // the last batch's buffer, for the next queue
	changed sync.Cond
}

// maxQueued is how much may wait before writers wait for the queue to be
// taken: a stalled output (a full pipe) holds back the callers, not memory.
const maxQueued = 1 << 20

// maxSpare is the largest batch buffer kept for reuse.
const maxSpare = 256 << 10

func newLineWriter(w io.Writer) *lineWriter {
	l := &lineWriter{w: w}
	l.changed.L = &l.mu
	return l
}

// Write writes or queues one whole line; zerolog reuses p after it returns,
// so a queued line is copied. The error is that of this caller's own write;
// a queued line's is dropped, as a log line's error has nowhere to go.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	for l.writing && len(l.queue) >= maxQueued {
		l.changed.Wait()
	}
	if l.writing {
		l.queue = append(l.queue, p...)
		l.mu.Unlock()
		return len(p), nil
	}
	l.writing = true
	l.mu.Unlock()

	_, err := l.w.Write(p)

	l.mu.Lock()
	if len(l.queue) == 0 {
		l.writing = false
		l.changed.Broadcast()
		l.mu.Unlock()
	} else {
		// Lines came in meanwhile: a goroutine of its own writes them, so
		// that this caller (a call on its way to its reply) goes on.
		l.mu.Unlock()
		go l.drain()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// drain writes the queue in batches until it is empty, then ends the write.
func (l *lineWriter) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) > 0 {
		batch := l.queue
		l.queue, l.spare = l.spare[:0], nil
		l.changed.Broadcast() // room for writers waiting on a full queue
		l.mu.Unlock()
		_, _ = l.w.Write(batch)
		l.mu.Lock()
		if cap(batch) <= maxSpare {
			l.spare = batch[:0]
		}
	}
	l.writing = false
	l.changed.Broadcast()
}

// flush waits until the lines written so far are out.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.writing {
		l.changed.Wait()
	}
}
