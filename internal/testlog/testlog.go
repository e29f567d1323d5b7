// Package testlog is the tests' one log sink: a buffer that a logger (or a
// background process's output) writes from many goroutines while the test
// reads it. Only _test files import it (internal/archtest checks).
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers and readers. Its
// zero value is ready to use.
type Buffer struct {
	// Redact, when set, rewrites each write before it is kept, as the
	// daemon's own log writer does.
	Redact func(string) string

	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps p (redacted when Redact is set); it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Redact != nil {
		b.buf.WriteString(b.Redact(string(p)))
		return len(p), nil
	}
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
