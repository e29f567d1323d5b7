//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// event is one line of the history: what the hub sent and received, when
// connections opened and ended, and when faults began and cleared. The
// invariants are checked against this record, never against timings.
type event struct {
	At     time.Duration // since the start of the run
	Kind   string
	Conn   string
	ID     string // requestId, task or fault id
	Detail string
}

func (e event) String() string {
	s := fmt.Sprintf("%9.3fs %-16s", e.At.Seconds(), e.Kind)
	if e.Conn != "" {
		s += " conn=" + e.Conn
	}
	if e.ID != "" {
		s += " id=" + e.ID
	}
	if e.Detail != "" {
		s += " " + e.Detail
	}
	return s
}

// violation is a broken invariant, with the history lines that show it.
type violation struct {
	What  string
	Key   string // requestId or task the lines are about
	Conn  string
	Lines []event
}

type callState struct {
	tool      string
	sent      time.Time
	results   int
	cancelled bool
}

type connState struct {
	id        string
	ended     bool
	endedAt   time.Time
	regAt     time.Time // zero until register_tools
	lastFrame time.Time // last frame from the node
	calls     map[string]*callState
	lastCB    int // sequence of the last callback on this connection
}

// recorder keeps the history and checks the invariants that can be checked
// as frames arrive. Its methods are safe for concurrent use.
type recorder struct {
	start time.Time

	mu         sync.Mutex
	events     []event
	conns      map[string]*connState
	connOrder  []string
	violations []violation
	changed    chan struct{}

	lastSeq       int                 // highest callback sequence delivered
	delivered     map[int]deliveredCB // by sequence, the latest delivery
	resent        int                 // callbacks delivered again on a later connection
	pathClearedAt time.Time           // last time a fault blocking the path cleared
	reregister    []time.Duration     // per reconnect: path usable again → register_tools
	unregistered  []time.Duration     // per reconnect: last frame of the old → register_tools
	endedCalls    int                 // calls whose connection ended before any result
}

type deliveredCB struct {
	conn string
	task string
}

func newRecorder(start time.Time) *recorder {
	return &recorder{start: start, conns: map[string]*connState{}, delivered: map[int]deliveredCB{}, changed: make(chan struct{})}
}

func (r *recorder) since(t time.Time) time.Duration { return t.Sub(r.start) }

// addLocked appends an event and wakes waiters.
func (r *recorder) addLocked(e event) {
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) note(kind, conn, id, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(event{At: time.Since(r.start), Kind: kind, Conn: conn, ID: id, Detail: detail})
}

func (r *recorder) connLocked(id string) *connState {
	c, ok := r.conns[id]
	if !ok {
		c = &connState{id: id, calls: map[string]*callState{}}
		r.conns[id] = c
		r.connOrder = append(r.connOrder, id)
	}
	return c
}

// frame is the hub's OnFrame: every data frame, in wire order per connection.
func (r *recorder) frame(f demohub.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.since(f.At)
	c := r.connLocked(f.ConnID)
	if f.Dir == demohub.FromNode {
		c.lastFrame = f.At
	}
	if f.Msg == nil {
		if f.Dir == demohub.FromNode {
			r.addLocked(event{At: at, Kind: "bad-frame", Conn: c.id, Detail: clipText(f.Err.Error())})
		}
		return
	}
	switch m := f.Msg.(type) {
	case wsproto.ExecuteTool:
		c.calls[m.RequestID] = &callState{tool: m.ToolName, sent: f.At}
		r.addLocked(event{At: at, Kind: "execute_tool", Conn: c.id, ID: m.RequestID, Detail: m.ToolName})
	case wsproto.CancelTool:
		if cs := c.calls[m.RequestID]; cs != nil {
			cs.cancelled = true
		}
		r.addLocked(event{At: at, Kind: "cancel_tool", Conn: c.id, ID: m.RequestID})
	case wsproto.ToolResult:
		detail := m.Status
		if m.Error != "" {
			detail += ": " + clipText(m.Error)
		}
		e := event{At: at, Kind: "tool_result", Conn: c.id, ID: m.RequestID, Detail: detail}
		r.addLocked(e)
		cs := c.calls[m.RequestID]
		switch {
		case cs == nil:
			r.violateLocked("tool_result for a requestId the hub never sent on this connection", m.RequestID, c.id)
		case cs.results > 0:
			cs.results++
			r.violateLocked(fmt.Sprintf("tool_result number %d for one execute_tool", cs.results), m.RequestID, c.id)
		default:
			cs.results++
		}
	case wsproto.RegisterTools:
		r.addLocked(event{At: at, Kind: "register_tools", Conn: c.id, Detail: fmt.Sprintf("%d tools", len(m.Tools))})
		if c.regAt.IsZero() {
			r.registeredLocked(c, f.At)
		}
	case wsproto.PluginCallbackForward:
		r.callbackLocked(c, at, m)
	case wsproto.ConnectionAck:
		r.addLocked(event{At: at, Kind: "connection_ack", Conn: c.id})
	}
}

// registeredLocked records a connection's first register_tools and, for
// every connection but the first, how long the node was away.
func (r *recorder) registeredLocked(c *connState, at time.Time) {
	c.regAt = at
	var prevLast time.Time
	for _, id := range r.connOrder {
		o := r.conns[id]
		if o != c && !o.regAt.IsZero() && o.lastFrame.After(prevLast) && o.lastFrame.Before(at) {
			prevLast = o.lastFrame
		}
	}
	if prevLast.IsZero() {
		return // the first registration
	}
	r.unregistered = append(r.unregistered, at.Sub(prevLast))
	from := prevLast
	if r.pathClearedAt.After(from) && r.pathClearedAt.Before(at) {
		from = r.pathClearedAt
	}
	r.reregister = append(r.reregister, at.Sub(from))
}

func (r *recorder) callbackLocked(c *connState, at time.Duration, m wsproto.PluginCallbackForward) {
	var body callbackBody
	if err := json.Unmarshal(m.CallbackData, &body); err != nil || body.Seq == 0 {
		r.addLocked(event{At: at, Kind: "callback", Conn: c.id, Detail: "undecodable: " + clipText(string(m.CallbackData))})
		r.violateLocked("plugin_callback_forward without the soak's sequence number", "", c.id)
		return
	}
	key := fmt.Sprintf("seq%d", body.Seq)
	r.addLocked(event{At: at, Kind: "callback", Conn: c.id, ID: key, Detail: body.TaskID})
	if body.Seq <= c.lastCB {
		r.violateLocked(fmt.Sprintf("callback %s (%s) delivered after seq%d on the same connection: out of the order the node accepted them", key, body.TaskID, c.lastCB), key, c.id)
	}
	c.lastCB = max(c.lastCB, body.Seq)
	if prev, dup := r.delivered[body.Seq]; dup {
		// The node keeps a written callback until a pong confirms it and
		// sends the unconfirmed ones again on its next connection; the
		// server overwrites the same result file. A second copy on the
		// same connection, or on an earlier one, is a bug.
		if r.connIndexLocked(c.id) <= r.connIndexLocked(prev.conn) {
			r.violateLocked(fmt.Sprintf("callback %s (%s) delivered twice on %s (first on %s), not re-sent on a later connection", key, body.TaskID, c.id, prev.conn), key, c.id)
			return
		}
		r.resent++
		r.delivered[body.Seq] = deliveredCB{conn: c.id, task: body.TaskID}
		return
	}
	r.delivered[body.Seq] = deliveredCB{conn: c.id, task: body.TaskID}
	if body.Seq < r.lastSeq {
		r.violateLocked(fmt.Sprintf("callback %s delivered after seq%d: out of the order the node accepted them", key, r.lastSeq), key, c.id)
	}
	r.lastSeq = max(r.lastSeq, body.Seq)
}

// connIndexLocked is the position of connection id in the order the
// connections were opened.
func (r *recorder) connIndexLocked(id string) int { return slices.Index(r.connOrder, id) }

// connEnded records that the hub's side of a connection ended.
func (r *recorder) connEnded(id string, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.connLocked(id)
	c.ended, c.endedAt = true, time.Now()
	open := 0
	for _, cs := range c.calls {
		if cs.results == 0 && !cs.cancelled {
			open++
		}
	}
	r.endedCalls += open
	r.addLocked(event{At: r.since(c.endedAt), Kind: "conn-end", Conn: id, Detail: fmt.Sprintf("%d calls unanswered (the server fails them itself): %v", open, clipText(fmt.Sprint(why)))})
}

// pathCleared records that a fault which kept the node from the hub cleared.
func (r *recorder) pathCleared(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pathClearedAt = at
}

// violateLocked records a broken invariant with the history that shows it.
func (r *recorder) violateLocked(what, key, conn string) {
	r.violations = append(r.violations, violation{What: what, Key: key, Conn: conn, Lines: r.sliceLocked(key, conn)})
}

func (r *recorder) violate(what, key, conn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violateLocked(what, key, conn)
}

// sliceLocked picks the history lines about key, the lifecycle of conn,
// faults and registrations, and the last lines before the violation.
func (r *recorder) sliceLocked(key, conn string) []event {
	var out []event
	tail := max(0, len(r.events)-15)
	for i, e := range r.events {
		switch {
		case key != "" && e.ID == key,
			strings.HasPrefix(e.Kind, "fault"),
			e.Kind == "conn-end", e.Kind == "register_tools", e.Kind == "connection_ack",
			i >= tail:
			out = append(out, e)
		}
	}
	const keep = 80
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out
}

func (r *recorder) firstViolation() *violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.violations) == 0 {
		return nil
	}
	v := r.violations[0]
	return &v
}

// checkStale flags calls on open connections that have had no result for
// longer than limit: the node read them (or the connection would have
// ended) and owes an answer.
func (r *recorder) checkStale(now time.Time, limit time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.connOrder {
		c := r.conns[id]
		if c.ended {
			continue
		}
		for rid, cs := range c.calls {
			if cs.results == 0 && !cs.cancelled && now.Sub(cs.sent) > limit {
				cs.cancelled = true // report each once
				r.violateLocked(fmt.Sprintf("no tool_result %s after execute_tool (%s) on a connection that is still open: lost", limit, cs.tool), rid, id)
			}
		}
	}
}

// outstanding counts calls without a result on open connections.
func (r *recorder) outstandingLocked() int {
	n := 0
	for _, c := range r.conns {
		if c.ended {
			continue
		}
		for _, cs := range c.calls {
			if cs.results == 0 && !cs.cancelled {
				n++
			}
		}
	}
	return n
}

// registeredConn reports whether an open connection has registered.
func (r *recorder) registeredConn() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registeredConnLocked()
}

func (r *recorder) registeredConnLocked() (string, bool) {
	for i := len(r.connOrder) - 1; i >= 0; i-- {
		c := r.conns[r.connOrder[i]]
		if !c.ended && !c.regAt.IsZero() {
			return c.id, true
		}
	}
	return "", false
}

// reconnectTimes returns the per-reconnect durations and the calls that
// ended with their connection.
func (r *recorder) reconnectTimes() (reregister, unregistered []time.Duration, endedCalls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reregister), slices.Clone(r.unregistered), r.endedCalls
}

func (r *recorder) deliveredCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.delivered)
}

// wait blocks until cond holds (checked under the lock at every change),
// or until the deadline.
func (r *recorder) wait(deadline time.Time, cond func() bool) bool {
	for {
		r.mu.Lock()
		ok := cond()
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		t := time.NewTimer(min(left, time.Second)) // conditions may also depend on the clock
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// checkCallbacks compares the callbacks the node accepted (in order) with
// those delivered: every one must arrive, also across a silent outage (the
// node sends what the server did not confirm again). It returns how many
// arrived a second time on a later connection.
func (r *recorder) checkCallbacks(accepted []acceptedCB) (resent int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range accepted {
		if _, ok := r.delivered[a.seq]; ok {
			continue
		}
		key := fmt.Sprintf("seq%d", a.seq)
		r.violateLocked(fmt.Sprintf("callback %s (%s) was accepted by the node but never delivered", key, a.task), key, "")
	}
	return r.resent
}

func clipText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func (r *recorder) eventCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// hasEventLocked reports an event of kind at or after index from.
func (r *recorder) hasEventLocked(from int, kind string) bool {
	for _, e := range r.events[min(from, len(r.events)):] {
		if e.Kind == kind {
			return true
		}
	}
	return false
}
