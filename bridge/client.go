package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/wsproto"
)

// DefaultListWait is how long the node waits for the server's list before
// it concludes the server offers no tools to nodes.
const DefaultListWait = 5 * time.Second

var (
	// ErrNotConnected: no connection to the server right now.
	ErrNotConnected = errors.New("not connected to the VCP server")
	// ErrConnectionLost: the connection ended while a call waited for its result.
	ErrConnectionLost = errors.New("the connection to the VCP server dropped while the call ran; it may or may not have completed on the server")
	// ErrNoBridge: the server did not answer the list request.
	ErrNoBridge = errors.New("the server offers no tools to nodes: its VCPToolBridge plugin is missing or turned off (Bridge_Enabled=false)")
	// ErrNotOffered: the server's list does not hold the tool.
	ErrNotOffered = errors.New("the server does not offer this tool to nodes")
	// ErrNoFinalResult: an asynchronous tool's task was accepted and its
	// final result did not come in time. VCPToolBox servers up to at least
	// 3c070506 never forward one (nothing raises the event their bridge
	// waits for); the server keeps it in its VCPAsyncResults directory.
	// ErrResultLost: the server's result came while the node was too busy
	// decoding earlier frames to take it.
	ErrResultLost    = errors.New("the server's result came while the node was busy decoding earlier frames and was dropped; the tool ran on the server")
	ErrNoFinalResult = errors.New("the server accepted the task but sent no final result; servers that do not forward asynchronous results keep it in their VCPAsyncResults directory")
)

// Send puts a frame on the connection in place; it fails once that
// connection has ended.
type Send = func(wsproto.Message) error

// Options configure a Client.
type Options struct {
	Log zerolog.Logger
	// ListWait bounds the wait for the server's list; zero means DefaultListWait.
	ListWait time.Duration
	// OnChange, if set, is called (from the client's own goroutine) when
	// the list of the server's tools changed, before the state says so:
	// what OnChange puts in force is in force once the state is offered
	// (or none).
	OnChange func()
}

// State says where the client stands with the server's bridge.
type State string

const (
	StateDisconnected State = "disconnected" // no connection to the server
	StateAsking       State = "asking"       // the list was asked for, no answer yet
	StateOffered      State = "offered"      // the server answered with its list
	StateNone         State = "none"         // the server did not answer: no bridge
)

// Status is the client's state for `vcpnode status`.
type Status struct {
	State State
	// Tools counts the server's tools in the last list (kept while disconnected).
	Tools int
	// Message says the state in plain words.
	Message string
	// Since is when the state was entered.
	Since time.Time
}

// Progress is one progress event of an asynchronous server tool.
type Progress struct {
	TaskID string
	// Kind is "accepted" (the server started the task), the server's
	// bridgeType ("log" or "info"), or KindDropped.
	Kind string
	// Data is the server's event as it sent it.
	Data json.RawMessage
	// Dropped, of a KindDropped event, counts the events lost since the
	// previous one.
	Dropped int
}

// KindDropped is the kind of the event that says how many progress
// events the node refused unhandled while it was busy (StatusLost).
const KindDropped = "dropped"

// Client keeps the list of the server's tools and runs them. Its methods
// are safe for concurrent use.
type Client struct {
	opts Options

	wg sync.WaitGroup // list requests started by Connected

	mu      sync.Mutex
	send    Send // nil while disconnected
	gen     uint64
	stop    context.CancelFunc // ends the list request of this connection
	seq     uint64
	plugins []wsproto.VCPPlugin
	listAt  time.Time // when plugins came; zero: never
	state   State
	since   time.Time
	lists   map[string]chan wsproto.VCPManifestResponse
	calls   map[string]*pending // by requestId, then by taskId
	closed  bool
}

type pending struct {
	gen      uint64
	tool     string
	done     chan outcome // buffered: one outcome
	progress func(Progress)
	taskID   string // set once the server answered with a task
	lost     int    // progress events lost since the caller was last told
}

type outcome struct {
	result json.RawMessage
	err    error
}

// New makes a client; it does nothing until Connected.
func New(opts Options) *Client {
	if opts.ListWait <= 0 {
		opts.ListWait = DefaultListWait
	}
	return &Client{opts: opts, state: StateDisconnected, since: time.Now(),
		lists: map[string]chan wsproto.VCPManifestResponse{}, calls: map[string]*pending{}}
}

// Connected is called by the session once its connection state is on the
// wire: the client asks for the server's list on it.
func (c *Client) Connected(send Send) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if c.stop != nil {
		c.stop()
	}
	c.gen++
	c.send = send
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.setStateLocked(StateAsking)
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		if _, err := c.Refresh(ctx); err != nil && ctx.Err() == nil {
			c.opts.Log.Info().Err(err).Msg("server tools: none")
		}
	}()
}

// Disconnected is called by the session when its connection has ended:
// every call waiting for a result fails at once with ErrConnectionLost (the
// server forgets this connection's tasks; a late result can never come).
func (c *Client) Disconnected() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.disconnectLocked(ErrConnectionLost)
}

func (c *Client) disconnectLocked(cause error) {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.send = nil
	c.gen++
	for id, p := range c.calls {
		delete(c.calls, id)
		p.done <- outcome{err: fmt.Errorf("%s: %w", p.tool, cause)}
	}
	for id, ch := range c.lists {
		delete(c.lists, id)
		close(ch)
	}
	c.setStateLocked(StateDisconnected)
}

// Close fails what waits and waits for the client's goroutines.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	c.disconnectLocked(ErrNotConnected)
	c.mu.Unlock()
	c.wg.Wait()
}

func (c *Client) setStateLocked(s State) {
	if c.state != s {
		c.state, c.since = s, time.Now()
	}
}

// Status reports the state and the size of the list.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{State: c.state, Tools: len(c.plugins), Since: c.since}
	switch c.state {
	case StateDisconnected:
		st.Message = "not connected to the server"
		if len(c.plugins) > 0 {
			st.Message += fmt.Sprintf("; %d server tools known from the last connection", len(c.plugins))
		}
	case StateAsking:
		st.Message = "asking the server for its tools"
	case StateOffered:
		st.Message = fmt.Sprintf("the server offers %d tools to nodes", len(c.plugins))
		if len(c.plugins) == 0 {
			st.Message = "the server's VCPToolBridge answered with no tools (all excluded, or none has invocation commands)"
		}
	case StateNone:
		st.Message = ErrNoBridge.Error()
	}
	return st
}

// Plugins is the server's last list, sorted by name.
func (c *Client) Plugins() []wsproto.VCPPlugin {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.plugins)
}

func (c *Client) nextIDLocked(kind string) string {
	c.seq++
	return "vcpnode-" + kind + "-" + strconv.FormatUint(c.gen, 36) + "-" + strconv.FormatUint(c.seq, 36)
}

// Refresh asks the server for its list and waits for it (at most ListWait).
// No answer in time means the server has no bridge: ErrNoBridge, and the
// list is emptied.
func (c *Client) Refresh(ctx context.Context) ([]wsproto.VCPPlugin, error) {
	c.mu.Lock()
	send := c.send
	if send == nil {
		c.mu.Unlock()
		return nil, ErrNotConnected
	}
	gen := c.gen
	id := c.nextIDLocked("list")
	ch := make(chan wsproto.VCPManifestResponse, 1)
	c.lists[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.lists, id)
		c.mu.Unlock()
	}
	if err := send(wsproto.GetVCPManifests{RequestID: id}); err != nil {
		forget()
		return nil, fmt.Errorf("ask the server for its tools: %w", err)
	}
	t := time.NewTimer(c.opts.ListWait)
	defer t.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, ErrConnectionLost
		}
		return c.setList(gen, resp.Plugins), nil
	case <-t.C:
		forget()
		c.mu.Lock()
		if c.gen != gen {
			c.mu.Unlock()
			return nil, ErrNoBridge
		}
		changed := len(c.plugins) > 0
		c.plugins = nil
		c.mu.Unlock()
		if changed {
			c.changed()
		}
		c.settle(gen, StateNone)
		return nil, ErrNoBridge
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

func (c *Client) setList(gen uint64, plugins []wsproto.VCPPlugin) []wsproto.VCPPlugin {
	plugins = slices.Clone(plugins)
	plugins = slices.DeleteFunc(plugins, func(p wsproto.VCPPlugin) bool { return p.Name == "" })
	slices.SortStableFunc(plugins, func(a, b wsproto.VCPPlugin) int { return strings.Compare(a.Name, b.Name) })
	plugins = slices.CompactFunc(plugins, func(a, b wsproto.VCPPlugin) bool { return a.Name == b.Name })
	c.mu.Lock()
	if c.gen != gen {
		c.mu.Unlock()
		return plugins
	}
	changed := !samePlugins(c.plugins, plugins)
	c.plugins, c.listAt = plugins, time.Now()
	c.mu.Unlock()
	if changed {
		c.changed()
	}
	c.settle(gen, StateOffered)
	return slices.Clone(plugins)
}

// settle sets the state the list of connection gen led to, after
// OnChange took the list in.
func (c *Client) settle(gen uint64, s State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.setStateLocked(s)
	}
}

func samePlugins(a, b []wsproto.VCPPlugin) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (c *Client) changed() {
	if c.opts.OnChange != nil {
		c.opts.OnChange()
	}
}

// Handle takes one bridge frame from the session; it reports whether the
// frame was one.
func (c *Client) Handle(m wsproto.Message) bool {
	switch m := m.(type) {
	case wsproto.VCPManifestResponse:
		c.mu.Lock()
		ch, ok := c.lists[m.RequestID]
		delete(c.lists, m.RequestID)
		c.mu.Unlock()
		if ok {
			ch <- m
		} else {
			c.opts.Log.Debug().Msg("ignored a server tool list nobody asked for")
		}
	case wsproto.VCPToolResult:
		c.result(m)
	case wsproto.VCPToolStatus:
		c.mu.Lock()
		p, ok := c.calls[m.TaskID]
		lost := 0
		if ok {
			lost, p.lost = p.lost, 0
		}
		c.mu.Unlock()
		if ok && m.TaskID != "" && p.progress != nil {
			p.tellLost(lost)
			p.progress(Progress{TaskID: m.TaskID, Kind: m.BridgeType, Data: m.Data})
		}
	default:
		return false
	}
	return true
}

func (c *Client) result(m wsproto.VCPToolResult) {
	c.mu.Lock()
	p, ok := c.calls[m.RequestID]
	if !ok {
		c.mu.Unlock()
		c.opts.Log.Debug().Msg("ignored a server tool result nobody waits for")
		return
	}
	delete(c.calls, m.RequestID)
	if m.Status == wsproto.StatusSuccess && p.taskID == "" {
		// An asynchronous tool answers with a task; its final result comes
		// later under the task's id.
		if task := taskIDOf(m.Result); task != "" {
			if _, taken := c.calls[task]; !taken {
				p.taskID = task
				c.calls[task] = p
				c.mu.Unlock()
				if p.progress != nil {
					p.progress(Progress{TaskID: task, Kind: "accepted", Data: m.Result})
				}
				return
			}
		}
	}
	lost := p.lost
	p.lost = 0
	c.mu.Unlock()
	p.tellLost(lost)
	if m.Status == wsproto.StatusError {
		p.done <- outcome{err: &ToolError{Tool: p.tool, Text: errorText(m.Error)}}
		return
	}
	res := m.Result
	if len(res) == 0 {
		res = json.RawMessage("null") // the server sent no result (a silent rejection)
	}
	p.done <- outcome{result: res}
}

// StatusLost counts a progress frame the session refused unhandled (the
// node was busy) against every call that follows a task's progress: the
// frame names its task only inside, so with several such calls each
// learns it may have been its. Each is told at its next event or its
// result (hubsession.ServerTools).
func (c *Client) StatusLost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, p := range c.calls {
		if p.taskID != "" && id == p.taskID && p.progress != nil {
			p.lost++
		}
	}
}

// ResultLost ends the call waiting on requestID (a call's id, or a task's
// for its final result) with ErrResultLost: the session refused its
// result unhandled (hubsession.ServerTools).
func (c *Client) ResultLost(requestID string) {
	c.mu.Lock()
	p, ok := c.calls[requestID]
	delete(c.calls, requestID)
	c.mu.Unlock()
	if !ok {
		return
	}
	c.opts.Log.Warn().Str("tool", p.tool).Msg("a server tool's result was dropped: the node was busy")
	p.done <- outcome{err: fmt.Errorf("%s: %w", p.tool, ErrResultLost)}
}

// tellLost tells p's caller of n lost progress events, if any.
func (p *pending) tellLost(n int) {
	if n > 0 && p.progress != nil {
		p.progress(Progress{TaskID: p.taskID, Kind: KindDropped, Dropped: n})
	}
}

// noFinalResult is the error of a call whose task the server accepted and
// whose final result did not come before the call's context ended.
type noFinalResult struct {
	tool, task string
	cause      error
}

func (e *noFinalResult) Error() string {
	return e.tool + ": " + e.TimeoutNote() + ": " + e.cause.Error()
}

// TimeoutNote is what the node's timeout message adds (toolhost.TimeoutNoter).
func (e *noFinalResult) TimeoutNote() string {
	return fmt.Sprintf("%s (task %s)", ErrNoFinalResult, e.task)
}

func (e *noFinalResult) Unwrap() []error { return []error{ErrNoFinalResult, e.cause} }

// ToolError is the server's error answer for a call.
type ToolError struct {
	Tool string
	Text string
}

func (e *ToolError) Error() string { return "the server's " + e.Tool + " failed: " + e.Text }

func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	if len(raw) == 0 {
		return "no error text"
	}
	return string(raw)
}

// taskIDOf is the taskId of a result object, as the server's bridge reads it.
func taskIDOf(result json.RawMessage) string {
	var r struct {
		TaskID json.RawMessage `json:"taskId"`
	}
	if len(result) == 0 || result[0] != '{' || json.Unmarshal(result, &r) != nil {
		return ""
	}
	return wsproto.ScalarText(r.TaskID)
}

// Call runs the server's tool name with args and waits for its result: for
// an asynchronous tool, the final one (progress, if set, hears the rest).
// It ends early with ctx, or with ErrConnectionLost if the connection drops.
func (c *Client) Call(ctx context.Context, name string, args map[string]json.RawMessage, progress func(Progress)) (json.RawMessage, error) {
	c.mu.Lock()
	if c.send == nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", name, ErrNotConnected)
	}
	if !slices.ContainsFunc(c.plugins, func(p wsproto.VCPPlugin) bool { return p.Name == name }) {
		err := c.unlistedLocked(name)
		c.mu.Unlock()
		return nil, err
	}
	send := c.send
	id := c.nextIDLocked("call")
	p := &pending{gen: c.gen, tool: name, done: make(chan outcome, 1), progress: progress}
	c.calls[id] = p
	c.mu.Unlock()
	if args == nil {
		args = map[string]json.RawMessage{}
	}
	if err := send(wsproto.ExecuteVCPTool{RequestID: id, ToolName: name, ToolArgs: args}); err != nil {
		c.forget(p)
		return nil, fmt.Errorf("%s: %w", name, ErrConnectionLost)
	}
	select {
	case o := <-p.done:
		return o.result, o.err
	case <-ctx.Done():
		if task := c.forget(p); task != "" {
			return nil, &noFinalResult{tool: name, task: task, cause: context.Cause(ctx)}
		}
		return nil, fmt.Errorf("%s: no result from the server: %w", name, context.Cause(ctx))
	}
}

// forget drops p and returns the task the server accepted for it, if any.
func (c *Client) forget(p *pending) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, q := range c.calls {
		if q == p {
			delete(c.calls, id)
		}
	}
	return p.taskID
}
