package toolhost

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// ErrRepeated: the model called one tool with the same arguments more
// often than the loop guard allows (Policy.RepeatLimit per RepeatWindow).
var ErrRepeated = errors.New("repeated call")

// repeatSweepAt is how many remembered call keys make the guard forget the
// ones whose window has passed, so a long session does not grow it.
const repeatSweepAt = 4096

// repeatKey names a tool and its exact arguments; the arguments are hashed
// so a large call is not kept whole.
type repeatKey struct {
	tool string
	args [sha256.Size]byte
}

// repeatLimit is the loop guard's limit for a tool: its own [tools.NAME]
// repeat_limit, else the policy's; 0 is off.
func (p Policy) repeatLimit(tool string) int {
	if o, ok := p.Tools[tool]; ok && o.RepeatLimit != nil {
		return *o.RepeatLimit
	}
	return p.RepeatLimit
}

// repeatedLocked checks a model's call against the loop guard and counts
// it: an error when tool has been called with these very arguments
// RepeatLimit times within RepeatWindow already (the refused call is not
// counted, so the guard lets calls through again once the model stops).
// Under d.mu.
func (d *Dispatcher) repeatedLocked(pol *Policy, tool string, args map[string]json.RawMessage, now time.Time) error {
	limit, window := pol.repeatLimit(tool), pol.RepeatWindow
	if limit <= 0 || window <= 0 {
		return nil
	}
	raw, _ := json.Marshal(args) // keys sorted: the same arguments, the same bytes
	key := repeatKey{tool, sha256.Sum256(raw)}
	if d.repeats == nil || len(d.repeats) >= repeatSweepAt {
		d.sweepRepeatsLocked(now, window)
	}
	recent := d.repeats[key][:0]
	for _, t := range d.repeats[key] {
		if now.Sub(t) < window {
			recent = append(recent, t)
		}
	}
	if len(recent) >= limit {
		d.repeats[key] = recent
		return fmt.Errorf("%w: %s was already called with these same arguments %d times in the last %s. "+
			"You are repeating yourself: use the results you already have, change the arguments, or stop calling it",
			ErrRepeated, tool, len(recent), humantext.Duration(window))
	}
	d.repeats[key] = append(recent, now)
	return nil
}

// sweepRepeatsLocked forgets the keys with no call inside the window.
func (d *Dispatcher) sweepRepeatsLocked(now time.Time, window time.Duration) {
	if d.repeats == nil {
		d.repeats = map[repeatKey][]time.Time{}
		return
	}
	for k, times := range d.repeats {
		if len(times) == 0 || now.Sub(times[len(times)-1]) >= window {
			delete(d.repeats, k)
		}
	}
}
