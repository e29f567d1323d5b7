package toolhost

import "slices"

// Origin groups the calls that came over one connection to the server.
// When that connection ends the server fails every call it carried and
// drops any later result, so the node lets them go together (EndOrigin).
// Compared by identity: make one per connection with NewOrigin.
type Origin struct{ _ byte }

// NewOrigin returns a fresh origin.
func NewOrigin() *Origin { return new(Origin) }

// EndOrigin lets go of the calls of o. Those that have not started
// (queued, or awaiting the owner's approval) are cancelled with cause at
// once and never run; their reply still comes, with cause. Those running
// go on, for the caller to cancel after a grace, but their slots no longer
// count against later calls: calls of the next connection never queue
// behind an ended one's. It returns how many calls it dropped and how many
// were running.
func (d *Dispatcher) EndOrigin(o *Origin, cause error) (dropped, running int) {
	if o == nil {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.calls {
		if c.Origin != o {
			continue
		}
		if c.running {
			running++
			if !c.orphaned {
				c.orphaned = true
				d.freeSlotLocked(c)
			}
			continue
		}
		// Queued, granted but not yet started, or awaiting approval: its
		// goroutine sees the cancelled context before it invokes the tool.
		dropped++
		c.cancel(cause)
	}
	d.queue = slices.DeleteFunc(d.queue, func(c *call) bool { return c.Origin == o })
	d.pumpLocked()
	return dropped, running
}
