package toolhost

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
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
	key := repeatKey{tool, argsKey(args)}
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
		// The owner reads the log, the model the error: a tool polled on
		// purpose (a status or progress query) is the owner's to allow, and
		// a model that polls can space its calls to fit the guard.
		d.log.Warn().Str(fieldTool, tool).Int("limit", limit).Dur("window", window).
			Msgf("loop guard: a call of %s refused, its arguments repeated %d times within %s; a tool polled on purpose "+
				"(a status or progress query) needs a higher [tools.%s] repeat_limit (0: no guard for it)",
				tool, len(recent), humantext.Duration(window), tool)
		return fmt.Errorf("%w: %s was already called with these same arguments %d times in the last %s. "+
			"You are repeating yourself: use the results you already have, change the arguments, or stop calling it; "+
			"to wait for something to finish, call it at most once every %s with the same arguments",
			ErrRepeated, tool, len(recent), humantext.Duration(window), humantext.Duration(window/time.Duration(limit)))
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

// argsKey hashes a call's arguments as the guard compares them: the order
// of the keys and the white space between JSON tokens do not count. It
// copies nothing, so a call with a large argument costs no memory here.
func argsKey(args map[string]json.RawMessage) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, k := range slices.Sorted(maps.Keys(args)) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(k)))
		h.Write(n[:])
		io.WriteString(h, k)
		writeCompact(h, args[k])
		h.Write([]byte{0xff}) // ends the value: no byte of UTF-8 text is 0xff
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// writeCompact writes a JSON value without the white space between its
// tokens, a run of bytes at a time.
func writeCompact(w io.Writer, raw []byte) {
	start, inString, escaped := 0, false, false
	for i, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if start < i {
				w.Write(raw[start:i])
			}
			start = i + 1
		}
	}
	if start < len(raw) {
		w.Write(raw[start:])
	}
}
