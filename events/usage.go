package events

import (
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Usage counts each tool's finished calls since the start, the
// owner's local calls included, for the console's "recently used" and
// "most called" orders. Calls of unknown tools are left out: their names
// come from the caller and would grow the map without bound.
type Usage struct {
	mu    sync.Mutex
	tools map[string]usage
}

// NewUsage returns a Usage with no calls counted.
func NewUsage() *Usage { return &Usage{tools: map[string]usage{}} }

type usage struct {
	calls uint64
	last  time.Time
}

func (u *Usage) Observe(rec toolhost.CallRecord) {
	if rec.Outcome == "unknown_tool" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	t := u.tools[rec.Tool]
	t.calls++
	t.last = rec.Finished
	u.tools[rec.Tool] = t
}

// Of is name's count and the end of its latest call (nil before any).
func (u *Usage) Of(name string) (uint64, *time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.tools[name]
	if !ok {
		return 0, nil
	}
	last := t.last
	return t.calls, &last
}
