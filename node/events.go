package node

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vcpnode/vcpnode/controlapi"
)

// The node publishes events as the control API streams them; these names
// keep the node's own code short.
type (
	Event       = controlapi.Event
	EventFilter = controlapi.EventFilter
)

// Event sources and kinds (controlapi).
const (
	EventSourceNode       = controlapi.EventSourceNode
	EventSourceServer     = controlapi.EventSourceServer
	EventCallStart        = controlapi.EventCallStart
	EventCallEnd          = controlapi.EventCallEnd
	EventApprovalRequest  = controlapi.EventApprovalRequest
	EventApprovalAnswered = controlapi.EventApprovalAnswered
	EventApprovalExpired  = controlapi.EventApprovalExpired
	EventToolLog          = controlapi.EventToolLog
	EventInfo             = controlapi.EventInfo
	EventDropped          = controlapi.EventDropped
)

const (
	maxEventText = 4 << 10
	maxEventData = 16 << 10
	// subscriberBuffer bounds the events one subscriber may lag behind;
	// past it the oldest are dropped and counted.
	subscriberBuffer = 256
)

// clipText bounds text at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// eventLog is a ring of recent events and the live subscribers. Publishing
// never blocks: a subscriber that lags loses its oldest events and is told
// how many.
type eventLog struct {
	mu     sync.Mutex
	ring   []Event
	head   int // index of the oldest event
	count  int
	nextID uint64
	subs   map[*eventSub]struct{}
}

func newEventLog(size int) *eventLog {
	return &eventLog{ring: make([]Event, size), nextID: 1, subs: map[*eventSub]struct{}{}}
}

// publish stamps ev with an id (and a time if it has none), keeps it and
// hands it to every subscriber.
func (l *eventLog) publish(ev Event) Event {
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

// since returns the kept events with an id above id, oldest first.
func (l *eventLog) since(id uint64) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sinceLocked(id)
}

func (l *eventLog) sinceLocked(id uint64) []Event {
	var out []Event
	for i := range l.count {
		if ev := l.ring[(l.head+i)%len(l.ring)]; ev.ID > id {
			out = append(out, ev)
		}
	}
	return out
}

// subscribe registers a subscriber; with backlog it first gets the kept
// events above since (as many as fit its buffer, the rest counted dropped).
func (l *eventLog) subscribe(backlog bool, since uint64) *eventSub {
	s := &eventSub{ready: make(chan struct{}, 1), max: subscriberBuffer}
	l.mu.Lock()
	defer l.mu.Unlock()
	if backlog {
		for _, ev := range l.sinceLocked(since) {
			s.push(ev)
		}
	}
	l.subs[s] = struct{}{}
	return s
}

func (l *eventLog) unsubscribe(s *eventSub) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.subs, s)
}

// eventSub is one reader's bounded queue.
type eventSub struct {
	mu      sync.Mutex
	q       []Event
	max     int
	dropped int
	ready   chan struct{} // holds a token while q is not empty
}

func (s *eventSub) push(ev Event) {
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

// next waits for events; dropped is how many were lost before them.
func (s *eventSub) next(ctx context.Context, stop <-chan struct{}) (evs []Event, dropped int, err error) {
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
