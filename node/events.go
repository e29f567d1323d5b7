package node

import (
	"context"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"
)

// Event sources.
const (
	EventSourceNode   = "node"   // this node's own calls
	EventSourceServer = "server" // the server's observer channels
)

// Event kinds. Server message types other than these arrive as EventInfo
// with their Type set, never as errors.
const (
	EventCallStart        = "call_start"        // this node accepted a call
	EventCallEnd          = "call_end"          // this node answered a call
	EventApprovalRequest  = "approval_request"  // a call waits for a human (either side)
	EventApprovalAnswered = "approval_answered" // answered from this machine
	EventApprovalExpired  = "approval_expired"  // a server approval's window passed
	EventToolLog          = "tool_log"          // vcp_log: the server finished a call
	EventInfo             = "info"              // any other broadcast
	// EventDropped is sent on a stream only: Dropped events were left out
	// because this subscriber read too slowly.
	EventDropped = "dropped"
)

// Event is one line of GET /v1/events and `vcpnode watch --json`.
type Event struct {
	// ID grows by one per event within one daemon run.
	ID     uint64    `json:"id"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // EventSourceNode or EventSourceServer
	Kind   string    `json:"kind"`
	// Channel is "VCPlog" or "vcpinfo" for server events.
	Channel string `json:"channel,omitempty"`
	// Type is the server's message type (vcp_log, tool_approval_request…).
	Type      string `json:"type,omitempty"`
	Tool      string `json:"tool,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// Status is the outcome word: this node's "ok", "error", "timeout"…, or
	// the server's vcp_log status ("success", "error"…).
	Status     string `json:"status,omitempty"`
	DurationMs *int64 `json:"durationMs,omitempty"`
	// Approval is how this node's approval gate decided, or "approved" /
	// "denied" for an answered server approval.
	Approval string `json:"approval,omitempty"`
	// Text is the result, content or error, clipped to maxEventText.
	Text  string `json:"text,omitempty"`
	Local bool   `json:"local,omitempty"`
	// ApprovalID is what `vcpnode approve` takes, for approval requests
	// (the server's requestId, or this node's short number).
	ApprovalID string `json:"approvalId,omitempty"`
	// Maid is the agent that asked, for server approval requests.
	Maid string `json:"maid,omitempty"`
	// Data is the server's data object as sent, when at most maxEventData.
	Data json.RawMessage `json:"data,omitempty"`
	// Dropped counts events left out before this one (EventDropped only).
	Dropped int `json:"dropped,omitempty"`
}

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

// EventFilter selects events for a stream; zero values select everything.
type EventFilter struct {
	Source string // EventSourceNode or EventSourceServer
	Tool   string // exact tool name
	Kinds  []string
}

// Match reports whether ev passes f. Dropped markers always pass.
func (f EventFilter) Match(ev Event) bool {
	if ev.Kind == EventDropped {
		return true
	}
	if f.Source != "" && ev.Source != f.Source {
		return false
	}
	if f.Tool != "" && ev.Tool != f.Tool {
		return false
	}
	if len(f.Kinds) > 0 {
		for _, k := range f.Kinds {
			if k == ev.Kind {
				return true
			}
		}
		return false
	}
	return true
}
