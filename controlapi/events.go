package controlapi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
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
	// Text is the result, content or error, clipped to 4 KiB.
	Text  string `json:"text,omitempty"`
	Local bool   `json:"local,omitempty"`
	// ApprovalID is what `vcpnode approve` takes, for approval requests
	// (the server's requestId, or this node's short number).
	ApprovalID string `json:"approvalId,omitempty"`
	// Maid is the agent that asked, for server approval requests.
	Maid string `json:"maid,omitempty"`
	// Data is the server's data object as sent, when at most 16 KiB.
	Data json.RawMessage `json:"data,omitempty"`
	// Dropped counts events left out before this one (EventDropped only).
	Dropped int `json:"dropped,omitempty"`
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

// EventStreamStart is the first line of every GET /v1/events stream: its ID
// is the last event id the daemon had published when the stream began.
const EventStreamStart = "stream_start"

// EventsQuery selects what GET /v1/events streams.
type EventsQuery struct {
	EventFilter
	// Backlog first sends the buffered events with an id above Since.
	Backlog bool
	Since   uint64
}

// Values encodes q as the query of GET /v1/events.
func (q EventsQuery) Values() url.Values {
	v := url.Values{}
	if q.Source != "" {
		v.Set("source", q.Source)
	}
	if q.Tool != "" {
		v.Set("tool", q.Tool)
	}
	if len(q.Kinds) > 0 {
		v.Set("kind", strings.Join(q.Kinds, ","))
	}
	if q.Backlog {
		v.Set("since", strconv.FormatUint(q.Since, 10))
	}
	return v
}

// ParseEventsQuery reads the query of GET /v1/events.
func ParseEventsQuery(v url.Values) (EventsQuery, error) {
	var q EventsQuery
	q.Source, q.Tool = v.Get("source"), v.Get("tool")
	if q.Source != "" && q.Source != EventSourceNode && q.Source != EventSourceServer {
		return q, fmt.Errorf("source must be %q or %q, not %q", EventSourceNode, EventSourceServer, q.Source)
	}
	if k := v.Get("kind"); k != "" {
		q.Kinds = strings.Split(k, ",")
	}
	if s := v.Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, fmt.Errorf("since must be an event id (a number), not %q", s)
		}
		q.Backlog, q.Since = true, n
	}
	return q, nil
}
