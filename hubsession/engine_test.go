package hubsession

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

func registerFrames(c *demohub.Conn) int {
	n := 0
	for _, f := range c.Received() {
		if _, ok := f.Msg.(wsproto.RegisterTools); ok {
			n++
		}
	}
	return n
}

// With register = false the engine connects and reports its addresses but
// sends register_tools only after Register, on the connection in place
// and on every later one at connect.
func TestRegisterHeldUntilRegister(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.Register = false }})
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	s := h.waitState("connected", func(s connState) bool { return s.Phase == controlapi.PhaseConnected })
	if s.Registered || !h.engine.ToolsHeld() || registerFrames(c) != 0 {
		t.Fatalf("before Register: registered %v, held %v, %d register_tools", s.Registered, h.engine.ToolsHeld(), registerFrames(c))
	}
	// Calls work before: the tools are there, only unregistered.
	if res := h.call(c, "Echo", map[string]any{"text": "hi"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call before Register: %+v", res)
	}
	if !h.engine.Register() {
		t.Fatal("the first Register said the tools were allowed already")
	}
	m, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	if rt := m.(wsproto.RegisterTools); len(rt.Tools) == 0 || rt.ServerName != "test-node" {
		t.Fatalf("register_tools after Register: %+v", rt)
	}
	h.waitState("registered", func(s connState) bool { return s.Registered })
	if h.engine.ToolsHeld() || h.engine.Register() {
		t.Fatal("after Register the tools are still held, or a second Register registers again")
	}
	c.Drop()
	next := h.accept()
	if _, err := next.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatalf("the next connection did not register at connect: %v", err)
	}
}

// The placeholder values go out whole after connecting, then as they change.
func TestPlaceholdersPushedOnConnectAndChange(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Placeholders.PushInterval = config.Duration(10 * time.Millisecond)
	}})
	if err := h.feed.Store().Set("VarBefore", "one", "test"); err != nil {
		t.Fatal(err)
	}
	c := h.accept()
	pushed := func(key, value string) {
		t.Helper()
		_, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
			u, ok := m.(wsproto.UpdateStaticPlaceholders)
			return ok && u.ServerName == "test-node" && u.Placeholders[key] == value
		})
		if err != nil {
			t.Fatalf("%s = %s never pushed: %v", key, value, err)
		}
	}
	pushed("{{VarBefore}}", "one")
	if err := h.feed.Store().Set("VarAfter", "two", "test"); err != nil {
		t.Fatal(err)
	}
	pushed("{{VarAfter}}", "two")
}

// fakeServerTools records what the session hands the bridge.
type fakeServerTools struct {
	mu           sync.Mutex
	send         func(wsproto.Message) error
	handled      []wsproto.Message
	lost         int      // StatusLost calls
	lostResults  []string // ResultLost calls' ids
	connected    chan struct{}
	disconnected chan struct{}
}

func (f *fakeServerTools) Connected(send func(wsproto.Message) error) {
	f.mu.Lock()
	f.send = send
	f.mu.Unlock()
	f.connected <- struct{}{}
}

func (f *fakeServerTools) Disconnected() { f.disconnected <- struct{}{} }

func (f *fakeServerTools) Handle(m wsproto.Message) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handled = append(f.handled, m)
	return true
}

func (f *fakeServerTools) StatusLost() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost++
}

func (f *fakeServerTools) ResultLost(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostResults = append(f.lostResults, id)
}

func (f *fakeServerTools) handledCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.handled)
}

// The bridge is told of each connection with a way to send on it, gets
// the server's bridge frames, and is told when the connection ends.
func TestServerToolsFollowTheConnection(t *testing.T) {
	st := &fakeServerTools{connected: make(chan struct{}, 4), disconnected: make(chan struct{}, 4)}
	h := startHarness(t, harnessOpt{bridge: st, hubOpts: demohub.Options{Bridge: &demohub.Bridge{}}})
	c := h.accept()
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-h.ctx.Done():
			t.Fatalf("the bridge was never told the connection %s", what)
		}
	}
	wait(st.connected, "began")
	st.mu.Lock()
	send := st.send
	st.mu.Unlock()
	if err := send(wsproto.GetVCPManifests{RequestID: "list-1"}); err != nil {
		t.Fatal(err)
	}
	// The hub answers the list on the same connection; the session hands
	// the answer to the bridge.
	if !testwait.Poll(h.ctx, func() bool { return st.handledCount() > 0 }) {
		t.Fatal("the hub's manifest answer never reached the bridge")
	}
	c.Drop()
	wait(st.disconnected, "ended")
	if err := send(wsproto.GetVCPManifests{RequestID: "list-2"}); err == nil {
		t.Fatal("sending on an ended connection succeeded")
	}
	h.accept()
	wait(st.connected, "began again")
}

// hugeStream may be larger than the server accepts in one frame.
type hugeStream struct{ closed chan struct{} }

func (s *hugeStream) MaxBytes() int64 { return config.ServerFrameLimit + 1 }
func (s *hugeStream) WriteJSON(io.Writer) error {
	return errors.New("a result over the frame limit must never be written")
}
func (s *hugeStream) Close() error {
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	return nil
}

// A result that could exceed the server's frame limit is not begun: the
// call gets an error result saying why, the stream is released, and the
// connection goes on.
func TestResultOverTheFrameLimitIsAnError(t *testing.T) {
	hs := &hugeStream{closed: make(chan struct{})}
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{streamTool{hs}}, config: func(c *config.Config) {
		c.Node.ExposedTools = append(c.Node.ExposedTools, "Streamer")
		// The dispatcher's own bound would refuse it first.
		c.Node.MaxResultBytes = 2 * config.ServerFrameLimit
	}})
	c := h.accept()
	res := h.call(c, "Streamer", nil)
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "could not send this result") ||
		!strings.Contains(res.Error, "limit") {
		t.Fatalf("result over the frame limit = %+v, want an error naming the limit", res)
	}
	select {
	case <-hs.closed:
	case <-h.ctx.Done():
		t.Fatal("the stream was never closed")
	}
	if res := h.call(c, "Echo", map[string]any{"text": "after"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after the refused result: %+v", res)
	}
}

// A second execute_tool with the id of a call still running is not run,
// and the session still closes without waiting for an answer to it.
func TestDuplicateRequestIDDoesNotHoldTheClose(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, timings: func(tm *Timings) {
		tm.CloseWait = 10 * time.Second
	}})
	c := h.accept()
	for range 2 {
		if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "dup", ToolName: "Gate"}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitStarted(gate, "dup")
	// Frames are handled in order: once this answer is back, the duplicate was handled too.
	if res := h.call(c, "Echo", map[string]any{"text": "after"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after the duplicate: %+v", res)
	}
	select {
	case id := <-gate.Started:
		t.Fatalf("the duplicate %q ran", id)
	default:
	}
	close(gate.Release)
	if _, err := c.WaitType(h.ctx, wsproto.TypeToolResult); err != nil {
		t.Fatal(err)
	}
	// Only the call that ran holds the close: a duplicate counted as
	// pending would hold it until CloseWait.
	h.engine.Restart()
	h.waitLog("reconnecting so the server sees the new tool set")
	if strings.Contains(h.logs.String(), "closing with calls still running") {
		t.Fatalf("the close waited on the duplicate:\n%s", h.logs.String())
	}
}

// A value from the wire is clipped in the session's log lines, saying how
// long it was.
func TestLongWireValuesAreClippedInTheLog(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	long := strings.Repeat("x", 1<<20)
	res := h.call(c, long, nil)
	if res.Status != wsproto.StatusError {
		t.Fatalf("call of an unknown tool = %+v", res)
	}
	h.waitLog(fmt.Sprintf("…(%d bytes)", len(long)))
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, `"message":"execute_tool"`) && strings.Contains(line, strings.Repeat("x", humantext.WireLogBytes+1)) {
			t.Fatalf("the session logged the tool name whole: %.300s…", line)
		}
	}
}

// SameHub: only what the server sees of the node's connection counts.
func TestSameHub(t *testing.T) {
	base := func() *Settings {
		cfg := config.Default()
		cfg.Hub.URL = "ws://127.0.0.1:1/vcp"
		cfg.Node.Labels = map[string]string{"room": "lab"}
		u, _ := url.Parse("ws://127.0.0.1:1/vcp/VCP_Key=k")
		return &Settings{Config: cfg, HubURL: u, Key: "k", Name: "n"}
	}
	same := base()
	same.Config.Node.MaxConcurrent = 99 // not the hub's
	if !SameHub(base(), same) {
		t.Error("settings that differ only in [node] max_concurrent are not the same hub")
	}
	for what, change := range map[string]func(*Settings){
		"URL":        func(s *Settings) { s.HubURL, _ = url.Parse("ws://127.0.0.1:2/vcp/VCP_Key=k") },
		"name":       func(s *Settings) { s.Name = "other" },
		"hub table":  func(s *Settings) { s.Config.Hub.PublicIP = "203.0.113.9" },
		"labels":     func(s *Settings) { s.Config.Node.Labels = map[string]string{"room": "hall"} },
		"tool_names": func(s *Settings) { s.Config.Node.ToolNames = "{tool}_n" },
		"a tool's name": func(s *Settings) {
			s.Config.Tools = map[string]config.ToolConfig{"Echo": {Name: "Echo2"}}
		},
	} {
		other := base()
		change(other)
		if SameHub(base(), other) || SameHub(other, base()) {
			t.Errorf("settings that differ in %s are the same hub", what)
		}
	}
}
