package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// Log field names used by the dispatcher.
const (
	fieldTool      = "tool"
	fieldRequestID = "request_id"
	fieldDuration  = "duration"
	fieldQueued    = "queued_for"
	fieldOutcome   = "outcome"
	fieldBytes     = "result_bytes"
	fieldError     = "error"
	fieldLocal     = "local"
	fieldArgNames  = "arg_names"
	fieldApproval  = "approval"
)

// logErrorBytes caps error texts in log lines; the full text goes to the server.
const logErrorBytes = 300

// invocation is what one Invoke produced.
type invocation struct {
	value    any
	err      error
	panicked any
	stack    []byte
}

// run is the goroutine that owns an accepted call: it waits for a slot,
// invokes the tool, and replies exactly once.
func (d *Dispatcher) run(c *call) {
	defer d.goroutineDone()
	defer c.cancel(nil)
	defer c.stopDeadline()

	// A typed tool's arguments are checked and coerced first: a wrong call
	// is answered at once, without a slot or the owner's approval. Only this
	// goroutine touches c.Args from here on.
	args, err := CheckArgs(c.spec, withoutRequestID(c.spec, c.Args))
	if err != nil {
		d.mu.Lock()
		c.awaiting = false
		d.releaseLocked(c)
		d.mu.Unlock()
		o := d.failed(c, err)
		d.logDone(c.name, c.Call, o, time.Since(c.accepted), 0, "")
		c.reply(o)
		return
	}
	c.Args = args

	if c.ask && !d.awaitApproval(c) {
		return
	}
	select {
	case <-c.ready:
	case <-c.ctx.Done():
	}
	d.mu.Lock()
	if !c.granted || c.ctx.Err() != nil {
		// Cancelled or out of time while queued.
		d.releaseLocked(c)
		d.mu.Unlock()
		o := d.interrupted(c)
		waited := time.Since(c.accepted)
		d.logDone(c.name, c.Call, o, waited, waited, c.approval)
		c.reply(o)
		return
	}
	c.running = true
	d.mu.Unlock()
	started := time.Now()

	done := make(chan invocation, 1)
	go invoke(c, done) // run always receives from done before returning
	var r invocation
	select {
	case r = <-done:
	case <-c.ctx.Done():
		// Give a well-behaved tool a moment to return its own error, but
		// answer before the server's timer fires even if it does not.
		grace := time.NewTimer(max(c.margin/2, minGrace))
		select {
		case r = <-done:
			grace.Stop()
		case <-grace.C:
			d.abandon(c, started, done)
			return
		}
	}
	o := d.outcome(c, r)
	d.mu.Lock()
	d.releaseLocked(c)
	d.mu.Unlock()
	d.logDone(c.name, c.Call, o, time.Since(c.accepted), started.Sub(c.accepted), c.approval)
	c.reply(o)
}

// abandon answers a call whose tool has not returned after its context
// ended, then waits for the tool: its slot stays taken until it returns, so
// the limits stay honest.
func (d *Dispatcher) abandon(c *call, started time.Time, done <-chan invocation) {
	o := d.interrupted(c)
	d.logDone(c.name, c.Call, o, time.Since(c.accepted), started.Sub(c.accepted), c.approval)
	c.reply(o)
	closeStream((<-done).value)
	d.mu.Lock()
	d.releaseLocked(c)
	d.mu.Unlock()
	d.log.Warn().Str(fieldTool, c.name).Str(fieldRequestID, c.RequestID).Dur(fieldDuration, time.Since(started)).
		Msg("tool returned only well after its call was given up; its slot was held until now (tools must return soon after their context ends)")
}

// minGrace is the least time run waits for a tool whose context has ended
// before answering for it; the usual wait is half the deadline margin, so
// the answer still beats the server's timer.
const minGrace = 5 * time.Millisecond

func invoke(c *call, done chan<- invocation) {
	defer func() {
		if p := recover(); p != nil {
			done <- invocation{panicked: p, stack: debug.Stack()}
		}
	}()
	v, err := c.tool.Invoke(c.ctx, c.Call)
	done <- invocation{value: v, err: err}
}

// closeStream releases a StreamResult nobody will write.
func closeStream(v any) {
	if s, ok := v.(StreamResult); ok {
		s.Close()
	}
}

// outcome turns what the tool returned into the reply. A StreamResult
// that does not become the reply's Stream is closed here.
func (d *Dispatcher) outcome(c *call, r invocation) Outcome {
	o := d.outcomeOf(c, r)
	if s, ok := r.value.(StreamResult); ok && o.Stream == nil {
		s.Close()
	}
	return o
}

func (d *Dispatcher) outcomeOf(c *call, r invocation) Outcome {
	if r.panicked != nil {
		d.log.Error().Str(fieldTool, c.name).Str(fieldRequestID, c.RequestID).
			Str("panic", fmt.Sprint(r.panicked)).Bytes("stack", r.stack).Msg("tool panicked; the call gets an error result")
		return d.failed(c, fmt.Errorf("tool %q %w: %v", c.name, ErrToolPanic, r.panicked))
	}
	// After cancel_tool the server has already given up: whatever the tool
	// returned, say it was cancelled (the node may drop the reply anyway).
	if errors.Is(context.Cause(c.ctx), ErrCancelled) {
		return d.interrupted(c)
	}
	if r.err != nil {
		if c.ctx.Err() != nil {
			return d.interruptedNoting(c, r.err)
		}
		return d.failed(c, r.err)
	}
	if s, ok := r.value.(StreamResult); ok {
		o, err := streamOutcome(c, s)
		if err != nil {
			return d.failed(c, err)
		}
		return o
	}
	raw, err := encodeResult(c.name, r.value, c.maxBytes, c.oversize)
	if err != nil {
		return d.failed(c, err)
	}
	return Outcome{RequestID: c.RequestID, Result: raw}
}

// interrupted is the outcome of a call whose context ended: timed out,
// cancelled by the server, cancelled by Shutdown, or by the caller's ctx.
func (d *Dispatcher) interrupted(c *call) Outcome { return d.interruptedNoting(c, nil) }

// TimeoutNoter is an error a tool returns when its context ended and it
// knows more than "timed out" (a server that accepted a task and never
// sent its result): the note joins the timeout's text.
type TimeoutNoter interface {
	error
	TimeoutNote() string
}

// interruptedNoting is interrupted, keeping the note of toolErr (what the
// tool returned) when it has one.
func (d *Dispatcher) interruptedNoting(c *call, toolErr error) Outcome {
	cause := context.Cause(c.ctx)
	var err error
	var noter TimeoutNoter
	switch {
	case errors.Is(cause, ErrTimeout) && errors.As(toolErr, &noter):
		err = fmt.Errorf("tool %q %w after %s on the node: %s", c.name, ErrTimeout, secondsText(c.limit), noter.TimeoutNote())
	case errors.Is(cause, ErrTimeout):
		err = fmt.Errorf("tool %q %w after %s on the node", c.name, ErrTimeout, secondsText(c.limit))
	case errors.Is(cause, ErrCancelled), errors.Is(cause, ErrShuttingDown):
		err = cause
	default:
		err = fmt.Errorf("call cancelled: %w", cause)
	}
	return d.failed(c, err)
}

func (d *Dispatcher) failed(c *call, err error) Outcome {
	return Outcome{RequestID: c.RequestID, Err: errorText(err.Error(), c.maxBytes), Cause: err}
}

// CallRecord is what observers (metrics, the audit file) learn about every
// finished call: the same facts as the "call finished" log line, never
// argument values.
type CallRecord struct {
	Tool      string
	RequestID string
	Local     bool
	// FromServer: the tool is one of the VCP server's own (Spec.FromServer),
	// a call this node makes to the server rather than one it serves.
	FromServer bool
	// Outcome is one word: "ok", "error", "timeout", "busy", "denied"…
	Outcome string
	// Error is the error text, truncated; empty on success.
	Error       string
	ResultBytes int
	// Result is the successful call's marshalled result (shared, read-only).
	Result json.RawMessage
	// Approval is how the approval gate decided; empty when the call ended
	// before reaching it (unknown tool, busy, shutting down).
	Approval ApprovalDecision
	Duration time.Duration // from acceptance to the reply
	Queued   time.Duration // from acceptance to the start of the tool (approval wait included)
	Finished time.Time
}

// Observe adds f, called synchronously once for every finished call, after
// its log line and before its reply. f must be quick and safe for
// concurrent use.
func (d *Dispatcher) Observe(f func(CallRecord)) {
	for {
		old := d.observers.Load()
		var next []func(CallRecord)
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, f)
		if d.observers.CompareAndSwap(old, &next) {
			return
		}
	}
}

// logDone writes the one info line every call gets, and tells the
// observers. Argument values are never logged here.
func (d *Dispatcher) logDone(tool string, in Call, o Outcome, total, queued time.Duration, approval ApprovalDecision) {
	// The names come from the wire: a record and a log line carry them clipped.
	rec := CallRecord{
		Tool: humantext.ClipWire(tool), RequestID: humantext.ClipWire(in.RequestID), Local: in.Local, Outcome: outcomeKind(o), Result: o.Result,
		Approval: approval, Duration: total, Queued: queued, Finished: time.Now(),
	}
	if e, _, ok := d.view.Load().reg.resolve(tool); ok {
		rec.FromServer = e.spec.FromServer
	}
	ev := d.log.Info().Str(fieldTool, rec.Tool).Str(fieldRequestID, rec.RequestID).
		Dur(fieldDuration, total).Str(fieldOutcome, rec.Outcome)
	if approval != "" {
		ev = ev.Str(fieldApproval, string(approval))
	}
	if queued > 0 {
		ev = ev.Dur(fieldQueued, queued)
	}
	if in.Local {
		ev = ev.Bool(fieldLocal, true)
	}
	if o.OK() {
		rec.ResultBytes = o.ResultBytes()
		ev = ev.Int(fieldBytes, rec.ResultBytes)
	} else {
		rec.Error = humantext.Truncate(o.Err, logErrorBytes)
		ev = ev.Str(fieldError, rec.Error)
	}
	ev.Msg("call finished")
	if obs := d.observers.Load(); obs != nil {
		for _, f := range *obs {
			f(rec)
		}
	}
}

// outcomeKinds name the dispatcher's own errors in one word.
var outcomeKinds = []struct {
	err  error
	kind string
}{
	{ErrTimeout, "timeout"},
	{ErrCancelled, "cancelled"},
	{ErrBusy, "busy"},
	{ErrUnknownTool, "unknown_tool"},
	{ErrShuttingDown, "shutting_down"},
	{ErrToolPanic, "panic"},
	{ErrResultTooLarge, "result_too_large"},
	{ErrBadResult, "bad_result"},
	{ErrRefused, "refused"},
	{ErrDenied, "denied"},
	{ErrNotApproved, "not_approved"},
	{ErrBadArgs, "bad_args"},
	{ErrRepeated, "repeated"},
}

// OutcomeKind names an outcome in one word ("ok", "timeout", "busy"…), as
// the "call finished" log line and CallRecord do.
func OutcomeKind(o Outcome) string { return outcomeKind(o) }

// outcomeKind names an outcome for logs in one word.
func outcomeKind(o Outcome) string {
	if o.OK() {
		return "ok"
	}
	for _, k := range outcomeKinds {
		if errors.Is(o.Cause, k.err) {
			return k.kind
		}
	}
	return "error"
}

// secondsText writes d in seconds, as short as it can: "57s", "0.18s".
func secondsText(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}

func argNames(args map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(args))
}
