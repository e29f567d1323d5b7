package observer

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/wsproto"
)

// What the observer channels bring in: broadcasts become events, approval
// requests become server approvals. Replays after a reconnect are dropped
// (approvals by requestId, other broadcasts by content).

const (
	// replayWindow is how long after a reconnect a broadcast identical to
	// one received before counts as a replay: the server starts replaying
	// after 3 s and sends at most 100, one every 80 ms.
	replayWindow = time.Minute
	// replayMemory is how many broadcasts are remembered for that check
	// (the server's replay cache holds 100).
	replayMemory = 200
	// approvalMemory bounds the approval ids remembered as seen.
	approvalMemory = 1000
	// maxApprovalID bounds a requestId (the server's are ~30 bytes).
	maxApprovalID = 256
)

// replayFilter remembers recent broadcasts by content hash.
type replayFilter struct {
	gen   int // connection generation
	since time.Time
	seen  map[[32]byte]int // hash → generation it arrived on
	order [][32]byte
}

func (f *replayFilter) reconnected(now time.Time) {
	f.gen++
	f.since = now
}

// duplicate records data and reports whether it is a replay of a broadcast
// an earlier connection already delivered.
func (f *replayFilter) duplicate(data []byte, now time.Time) bool {
	if f.seen == nil {
		f.seen = map[[32]byte]int{}
	}
	h := sha256.Sum256(data)
	if gen, ok := f.seen[h]; ok && gen < f.gen && now.Sub(f.since) < replayWindow {
		return true
	}
	if _, ok := f.seen[h]; !ok {
		f.order = append(f.order, h)
		if len(f.order) > replayMemory {
			delete(f.seen, f.order[0])
			f.order = f.order[1:]
		}
	}
	f.seen[h] = f.gen
	return false
}

func (o *Set) handle(c *observerConn, data []byte) {
	var m wsproto.Broadcast
	if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
		o.warnings.Warn(o.log, "observer-malformed", func(e *zerolog.Event) {
			e.Str("channel", c.channel).Int("bytes", len(data)).Msg("malformed observer broadcast (not a JSON object with a type): dropped")
		})
		return
	}
	if m.Type == wsproto.TypeConnectionAck {
		return
	}
	if m.Type == wsproto.TypeToolApprovalRequest {
		o.approvalRequest(c, m)
		return
	}
	c.mu.Lock()
	dup := c.dedupe.duplicate(data, time.Now())
	c.mu.Unlock()
	if dup {
		return
	}
	ev := controlapi.Event{Source: controlapi.EventSourceServer, Channel: c.channel, Type: string(m.Type), Kind: controlapi.EventInfo}
	if len(m.Data) <= events.MaxData {
		ev.Data = m.Data
	}
	var d wsproto.VCPLogData
	_ = json.Unmarshal(m.Data, &d) // data has no fixed schema: take what fits
	ev.Tool = d.ToolName
	if ev.Tool == "" {
		ev.Tool = d.ToolName2
	}
	ev.Status = d.Status
	switch v := d.Content.(type) {
	case string:
		ev.Text = v
	case nil:
		ev.Text = d.Message
	default:
		raw, _ := json.Marshal(v)
		ev.Text = string(raw)
	}
	if ev.Text == "" {
		ev.Text = m.Message
	}
	ev.Text = events.ClipText(ev.Text, events.MaxText)
	if m.Type == wsproto.TypeVCPLog {
		ev.Kind = controlapi.EventToolLog
	}
	o.events.Publish(ev)
}

func (o *Set) approvalRequest(c *observerConn, m wsproto.Broadcast) {
	var d wsproto.ApprovalRequest
	if err := json.Unmarshal(m.Data, &d); err != nil || d.RequestID == "" || len(d.RequestID) > maxApprovalID {
		o.warnings.Warn(o.log, "observer-malformed", func(e *zerolog.Event) {
			e.Str("channel", c.channel).Msg("tool_approval_request without a usable requestId: dropped")
		})
		return
	}
	now := time.Now()
	requested := now
	if t, err := time.Parse(time.RFC3339Nano, d.Timestamp); err == nil && t.Before(now) {
		requested = t
	}
	ttl := time.Duration(d.ApprovalTTLMs) * time.Millisecond
	if ttl <= 0 {
		ttl = 5 * time.Minute // the server's default
	}
	a := Approval{
		RequestID: d.RequestID, Tool: d.ToolName, Maid: d.Maid, Args: d.Args,
		Requested: requested, Expires: requested.Add(ttl), TTL: ttl, Channel: c.channel,
	}
	if !o.approvals.add(a, now) {
		return // a replay, or already expired
	}
	ev := controlapi.Event{
		Source: controlapi.EventSourceServer, Channel: c.channel, Type: string(m.Type), Kind: controlapi.EventApprovalRequest,
		Tool: a.Tool, RequestID: a.RequestID, Maid: a.Maid, Text: events.ClipText(events.ArgSummary(a.Args), events.MaxText),
		ApprovalID: a.RequestID,
	}
	if len(m.Data) <= events.MaxData {
		ev.Data = m.Data
	}
	o.events.Publish(ev)
	if o.notify != nil {
		o.notify(a)
	}
}

// Approval is a call the server holds until a human answers.
type Approval struct {
	RequestID string
	Tool      string
	Maid      string
	Args      map[string]json.RawMessage
	Requested time.Time
	Expires   time.Time
	TTL       time.Duration
	Channel   string
}

// ErrNoSuchApproval: the id is not a pending server approval.
var ErrNoSuchApproval = errors.New("no such server approval")

// serverApprovals are the pending server approvals, and every id seen, so a
// replayed request that was answered or expired never shows again.
type serverApprovals struct {
	events *events.Log
	mu     sync.Mutex
	closed bool
	// pending by requestId; each has a timer that expires it.
	pending map[string]*pendingServerApproval
	seen    map[string]struct{}
	order   []string
	arrived uint64 // requests added so far: orders those with equal timestamps
}

type pendingServerApproval struct {
	a     Approval
	timer *time.Timer
	seq   uint64
}

func newServerApprovals(evlog *events.Log) *serverApprovals {
	return &serverApprovals{events: evlog, pending: map[string]*pendingServerApproval{}, seen: map[string]struct{}{}}
}

// add records a request; false when it was seen before or has expired.
func (s *serverApprovals) add(a Approval, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[a.RequestID]; ok || s.closed {
		return false
	}
	s.seen[a.RequestID] = struct{}{}
	s.order = append(s.order, a.RequestID)
	if len(s.order) > approvalMemory {
		old := s.order[0]
		s.order = s.order[1:]
		if _, pending := s.pending[old]; !pending {
			delete(s.seen, old)
		}
	}
	if !a.Expires.After(now) {
		return false
	}
	s.arrived++
	p := &pendingServerApproval{a: a, seq: s.arrived}
	p.timer = time.AfterFunc(a.Expires.Sub(now), func() { s.expire(a.RequestID) })
	s.pending[a.RequestID] = p
	return true
}

func (s *serverApprovals) expire(id string) {
	s.mu.Lock()
	p, ok := s.pending[id]
	if ok {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if ok {
		s.events.Publish(controlapi.Event{Source: controlapi.EventSourceServer, Channel: p.a.Channel, Kind: controlapi.EventApprovalExpired,
			Tool: p.a.Tool, RequestID: id, Status: "expired"})
	}
}

// list is the pending approvals, oldest first.
func (s *serverApprovals) list() []Approval {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	live := make([]*pendingServerApproval, 0, len(s.pending))
	for _, p := range s.pending {
		if p.a.Expires.After(now) {
			live = append(live, p)
		}
	}
	// The server's timestamps have millisecond resolution: equal ones keep
	// the order the requests arrived in.
	sort.Slice(live, func(i, j int) bool {
		if !live[i].a.Requested.Equal(live[j].a.Requested) {
			return live[i].a.Requested.Before(live[j].a.Requested)
		}
		return live[i].seq < live[j].seq
	})
	out := make([]Approval, len(live))
	for i, p := range live {
		out[i] = p.a
	}
	return out
}

func (s *serverApprovals) get(id string) (Approval, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[id]
	if !ok || !p.a.Expires.After(time.Now()) {
		return Approval{}, false
	}
	return p.a, true
}

// remove takes id out once answered; false if it went meanwhile.
func (s *serverApprovals) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[id]
	if ok {
		p.timer.Stop()
		delete(s.pending, id)
	}
	return ok
}

func (s *serverApprovals) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, p := range s.pending {
		p.timer.Stop()
		delete(s.pending, id)
	}
}

// Answer sends tool_approval_response for a pending server approval. The
// server ignores answers to unknown or decided ids without a reply, so the
// check that it is still pending is made here.
func (o *Set) Answer(id string, approve bool, reason string) (Approval, error) {
	a, ok := o.approvals.get(id)
	if !ok {
		return Approval{}, fmt.Errorf("%w: %q (it may have been answered or have expired; vcpnode approvals lists the pending ones)", ErrNoSuchApproval, id)
	}
	raw, err := wsproto.EncodeApprovalResponse(wsproto.ApprovalResponse{RequestID: a.RequestID, Approved: approve, Reason: reason})
	if err != nil {
		return a, err
	}
	if err := o.write(a.Channel, raw); err != nil {
		return a, err
	}
	o.approvals.remove(id)
	verdict := "denied"
	if approve {
		verdict = "approved"
	}
	o.events.Publish(controlapi.Event{Source: controlapi.EventSourceServer, Channel: a.Channel, Kind: controlapi.EventApprovalAnswered,
		Tool: a.Tool, RequestID: a.RequestID, Approval: verdict, Text: events.ClipText(reason, events.MaxText)})
	return a, nil
}

// Pending is the pending server approvals, oldest first.
func (o *Set) Pending() []Approval { return o.approvals.list() }

// Lookup is the pending server approval id, if it still waits.
func (o *Set) Lookup(id string) (Approval, bool) { return o.approvals.get(id) }
