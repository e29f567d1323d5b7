package hubconn

import (
	"fmt"
	"net"
	"sync"

	"github.com/vcpnode/vcpnode/config"
)

// gatherMax is the most a gathered batch holds before it is written; a
// write that would not fit goes out after what is gathered.
const gatherMax = 64 << 10

// gatherConn is the socket under the WebSocket library. Writes go straight
// to the socket, except while the data-frame writer gathers (Conn.Gather):
// then they wait in a buffer that goes out in one write(2) when it fills or
// the gathering ends (Conn.Flush). Results written back to back then cost
// one system call, and the server one read, per batch instead of per frame.
// Control frames written meanwhile from other goroutines join the batch;
// it is flushed before the writer waits for anything, so none waits long.
type gatherConn struct {
	net.Conn
	mu        sync.Mutex
	gathering bool
	buf       []byte
}

func (g *gatherConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gathering && len(g.buf) == 0 {
		return g.Conn.Write(p)
	}
	if len(g.buf)+len(p) > gatherMax {
		if err := g.flushLocked(); err != nil {
			return 0, err
		}
	}
	if !g.gathering || len(p) > gatherMax/2 {
		return g.Conn.Write(p)
	}
	g.buf = append(g.buf, p...)
	return len(p), nil
}

// gather begins a batch.
func (g *gatherConn) gather() {
	g.mu.Lock()
	g.gathering = true
	g.mu.Unlock()
}

// flush ends the batch and writes what it gathered.
func (g *gatherConn) flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gathering = false
	return g.flushLocked()
}

func (g *gatherConn) flushLocked() error {
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.Conn.Write(g.buf)
	if cap(g.buf) > 2*gatherMax {
		g.buf = nil
	} else {
		g.buf = g.buf[:0]
	}
	return err
}

// Gather makes the frames written from now until Flush leave together, in
// as few write(2)s as gatherMax allows. Only the data-frame writer calls it,
// and it must call Flush before it waits for anything else. Without a
// gathering socket (a Conn made by New around a connection of its own) it
// does nothing.
func (c *Conn) Gather() {
	if c.gather != nil {
		c.gather.gather()
	}
}

// Flush writes what was gathered since Gather and ends the gathering. Its
// error is redacted; the frames' own writes succeeded without reaching the
// socket, so the connection must be given up when it fails.
func (c *Conn) Flush() error {
	if c.gather == nil {
		return nil
	}
	if err := c.gather.flush(); err != nil {
		return config.RedactErr(fmt.Errorf("write: %w", err))
	}
	return nil
}
