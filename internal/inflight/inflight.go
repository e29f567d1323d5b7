// Package inflight counts work in progress that a shutdown waits for: once
// closed, no new work begins, and the closer gets a channel closed when the
// last piece ends. The plugin host counts its processes with it, a hub
// session the calls it read and has not answered.
package inflight

import "sync"

// Counter counts work in progress. Its zero value is open and ready to use.
type Counter struct {
	mu     sync.Mutex
	n      int
	closed bool          // nothing new begins
	idle   chan struct{} // closed when n drops to zero; made by waiters
}

// Begin counts one more piece of work; false once the counter is closed.
func (c *Counter) Begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.n++
	return true
}

// End is called once for every Begin that returned true, when that work
// is over.
func (c *Counter) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// Close stops new work and returns how much is still in progress, with a
// channel closed when that drops to zero (nil when it already is zero).
// It may be called more than once.
func (c *Counter) Close() (<-chan struct{}, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.idleLocked()
}

// CloseIfIdle closes the counter only when nothing is in progress, and
// then returns nil and 0; otherwise it leaves it open and returns, as
// Close does, a channel closed when nothing is, and how much is.
func (c *Counter) CloseIfIdle() (<-chan struct{}, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.closed = true
	}
	return c.idleLocked()
}

func (c *Counter) idleLocked() (<-chan struct{}, int) {
	if c.n == 0 {
		return nil, 0
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	return c.idle, c.n
}

// Count is how much work is in progress.
func (c *Counter) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
