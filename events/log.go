package events

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vcpnode/vcpnode/controlapi"
)

// The events are the control API's: what the log keeps is what
// GET /v1/events streams.
type (
	Event  = controlapi.Event
	Filter = controlapi.EventFilter
)

// Bounds of what one event carries: the text is clipped (ClipText), and
// data larger than MaxData is left out by the publisher.
const (
	MaxText = 4 << 10
	MaxData = 16 << 10
)

const (
	// subscriberBuffer bounds the events one subscriber may lag behind;
	// past it the oldest are dropped and counted.
	subscriberBuffer = 256
)

// ClipText bounds text at a rune boundary, marking the cut.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ArgSummary is a call's arguments as k=v pairs for an event line, each
// value clipped; the CLI has its own.
func ArgSummary(args map[string]json.RawMessage) string {
	keys := slices.Sorted(maps.Keys(args))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+ClipText(string(args[k]), 80))
	}
	return strings.Join(parts, " ")
}

// Log is a ring of recent events and the live subscribers. Publishing
// never blocks: a subscriber that lags loses its oldest events and is told
// how many.
type Log struct {
	mu     sync.Mutex
	ring   []Event
	head   int // index of the oldest event
	count  int
	nextID uint64
	subs   map[*Sub]struct{}
}

// New keeps the last size events.
func New(size int) *Log {
	return &Log{ring: make([]Event, size), nextID: 1, subs: map[*Sub]struct{}{}}
}

// Publish stamps ev with an id (and a time if it has none), keeps it and
// hands it to every subscriber.
func (l *Log) Publish(ev Event) Event {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ev.ID = l.nextID
	l.nextID++
	if l.count < len(l.ring) {
		l.ring[(l.head+l.count)%len(l.ring)] = ev
		l.count++
	} else {
		l.ring[l.head] = ev
		l.head = (l.head + 1) % len(l.ring)
	}
	for s := range l.subs {
		s.push(ev)
	}
	return ev
}

// Since returns the kept events with an id above id, oldest first.
func (l *Log) Since(id uint64) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sinceLocked(id)
}

func (l *Log) sinceLocked(id uint64) []Event {
	var out []Event
	for i := range l.count {
		if ev := l.ring[(l.head+i)%len(l.ring)]; ev.ID > id {
			out = append(out, ev)
		}
	}
	return out
}

// Subscribe registers a subscriber; with backlog it first gets the kept
// events above since (as many as fit its buffer, the rest counted dropped).
// last is the id of the last event published before the subscription.
func (l *Log) Subscribe(backlog bool, since uint64) (s *Sub, last uint64) {
	s = &Sub{ready: make(chan struct{}, 1), max: subscriberBuffer}
	l.mu.Lock()
	defer l.mu.Unlock()
	if backlog {
		for _, ev := range l.sinceLocked(since) {
			s.push(ev)
		}
	}
	l.subs[s] = struct{}{}
	return s, l.nextID - 1
}

// Unsubscribe stops handing events to s.
func (l *Log) Unsubscribe(s *Sub) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.subs, s)
}

// Sub is one reader's bounded queue.
type Sub struct {
	mu      sync.Mutex
	q       []Event
	max     int
	dropped int
	ready   chan struct{} // holds a token while q is not empty
}

func (s *Sub) push(ev Event) {
	s.mu.Lock()
	if len(s.q) >= s.max {
		s.q = s.q[1:]
		s.dropped++
	}
	s.q = append(s.q, ev)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next waits for events; dropped is how many were lost before them. It
// returns context.Canceled once stop is closed.
func (s *Sub) Next(ctx context.Context, stop <-chan struct{}) (evs []Event, dropped int, err error) {
	for {
		s.mu.Lock()
		if len(s.q) > 0 || s.dropped > 0 {
			evs, dropped = s.q, s.dropped
			s.q, s.dropped = nil, 0
			s.mu.Unlock()
			return evs, dropped, nil
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-stop:
			return nil, 0, context.Canceled
		}
	}
}
