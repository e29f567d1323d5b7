package demohub

import (
	"context"
	"fmt"
	"sync"
)

// changes lets goroutines wait for a state that a mutex guards: every
// change of it calls notify, which wakes every waiter to check again.
type changes struct {
	ch chan struct{} // closed and replaced on every change
}

func newChanges() changes { return changes{ch: make(chan struct{})} }

// notify wakes every waiter; the state's mutex must be held.
func (c *changes) notify() {
	close(c.ch)
	c.ch = make(chan struct{})
}

// wait blocks until cond is true (nil), end returns an error (that error),
// or ctx is done (ctx's error, after "demohub: " and waiting, which says
// who waited for what). cond and end are called with mu held, cond first: a
// state reached before the end still counts.
func (c *changes) wait(ctx context.Context, waiting string, mu *sync.Mutex, cond func() bool, end func() error) error {
	for {
		mu.Lock()
		if cond() {
			mu.Unlock()
			return nil
		}
		if err := end(); err != nil {
			mu.Unlock()
			return err
		}
		ch := c.ch
		mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("demohub: %s: %w", waiting, ctx.Err())
		}
	}
}
