// Package outpipe is a child's output pipe as the daemon reads it: a pipe
// whose read end takes deadlines on every system, and a Reader for which a
// deadline ends the wait for more output, never the read of what the pipe
// already holds.
//
// After a child exits, its output is read for a short drain so that a
// descendant holding the pipe cannot hold the caller. The deadline is a
// wall clock: a reader the scheduler had not run before it passed would
// return the timeout with the child's last writes still in the pipe. A
// Reader takes what the pipe holds at that moment (FIONREAD, PeekNamedPipe
// on Windows), no more, so a descendant still writing cannot hold it.
package outpipe

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// Conn is what a Reader reads: a pipe's read end (ours of New, an
// *os.File), or a socket a child writes to (a *net.UnixConn).
type Conn interface {
	io.Reader
	SetReadDeadline(time.Time) error
	SyscallConn() (syscall.RawConn, error)
}

// Reader reads a pipe's read end (or a socket) to its end or its
// deadline. It is the only reader.
type Reader struct {
	f Conn
	// draining: the deadline passed; budget bytes are left of what the
	// pipe held then.
	draining bool
	budget   int
}

// NewReader reads f.
func NewReader(f Conn) *Reader { return &Reader{f: f} }

// Read reads f. Once f's read deadline has passed it reads the bytes the
// pipe holds at that moment and then returns os.ErrDeadlineExceeded for
// good. The deadline is lifted for those reads, which never wait (nobody
// else reads the pipe); a deadline set meanwhile (a stop) is lifted again.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !r.draining {
		n, err := r.f.Read(p)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		r.draining = true
		if r.budget, err = Pending(r.f); err != nil {
			r.budget = 0
		}
		if n > 0 {
			return n, nil
		}
	}
	for r.budget > 0 {
		if err := r.f.SetReadDeadline(time.Time{}); err != nil {
			r.budget = 0
			break
		}
		n, err := r.f.Read(p[:min(len(p), r.budget)])
		r.budget -= n
		if n > 0 {
			return n, nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			r.budget = 0
			if err != nil {
				return 0, err
			}
		}
	}
	return 0, os.ErrDeadlineExceeded
}
