package observer_test

// The observer channels in a whole running node (nodetest): the daemon's
// observer mode, the node's session untouched by theirs, their events and
// the node's in one control API. The Set's own tests are in package
// observer.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/nodetest"
	"github.com/vcpnode/vcpnode/node"
)

func observerHarness(t *testing.T, more func(*config.Config)) (*nodetest.Harness, *controlapi.ControlClient) {
	t.Helper()
	h := nodetest.Start(t, nodetest.Options{Config: func(c *config.Config) {
		c.Observer.Enabled = true
		if more != nil {
			more(c)
		}
	}})
	h.Accept()
	_, client := h.Control("")
	return h, client
}

// eventStream reads GET /v1/events into a channel.
func eventStream(t *testing.T, h *nodetest.Harness, c *controlapi.ControlClient, q controlapi.EventsQuery) <-chan controlapi.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(h.Ctx)
	t.Cleanup(cancel)
	out := make(chan controlapi.Event, 1024)
	started := make(chan struct{})
	go func() {
		_ = c.Events(ctx, q, func(ev controlapi.Event) error {
			if ev.Kind == controlapi.EventStreamStart {
				close(started)
				return nil
			}
			out <- ev
			return nil
		})
	}()
	select {
	case <-started:
	case <-h.Ctx.Done():
		t.Fatal("event stream never started")
	}
	return out
}

// nextEvent returns the next event that is not of the skipped kinds.
func nextEvent(t *testing.T, h *nodetest.Harness, evs <-chan controlapi.Event, skip ...string) controlapi.Event {
	t.Helper()
	for {
		select {
		case ev := <-evs:
			skipped := false
			for _, k := range skip {
				skipped = skipped || ev.Kind == k
			}
			if !skipped {
				return ev
			}
		case <-h.Ctx.Done():
			t.Fatal("no event came")
		}
	}
}

func waitObserversConnected(t *testing.T, h *nodetest.Harness, c *controlapi.ControlClient, sessions int) controlapi.StatusResponse {
	t.Helper()
	for {
		st, err := c.Status(h.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(st.Observers) == 2 && st.Observers[0].Sessions >= sessions // VCPlog's
		for _, o := range st.Observers {
			ok = ok && o.Phase == node.PhaseConnected
		}
		if ok {
			return st
		}
		select {
		case <-h.Ctx.Done():
			t.Fatalf("observers never connected: %+v", st.Observers)
		case <-time.After(10 * time.Millisecond): // status has no change channel
		}
	}
}

// Observer mode keeps only the observer channels, and answers the
// server's approval requests from the daemon through them.
func TestObserverModeOpensNoDistributedSession(t *testing.T) {
	// The key in the path only: the handshakes counted below are the observers'.
	h := nodetest.Start(t, nodetest.Options{Config: func(c *config.Config) { c.Node.Mode = config.ModeObserver; c.Hub.Auth = "path" }})
	_, client := h.Control("")
	h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	id, err := h.Hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, h, evs); ev.Kind != controlapi.EventApprovalRequest || ev.RequestID != id {
		t.Fatalf("approval event %+v", ev)
	}
	if _, err := client.Decide(h.Ctx, id, false, "not now"); err != nil {
		t.Fatal(err)
	}
	if ans, err := h.Hub.WaitApprovalAnswer(h.Ctx, id); err != nil || ans.Approved || ans.Reason != "not now" {
		t.Fatalf("hub got %+v, %v", ans, err)
	}

	// By now a node connection, dialled at start, would have been made.
	if ok, refused := h.Hub.Handshakes(); ok != 2 || refused != 0 || len(h.Hub.Conns()) != 0 {
		t.Fatalf("handshakes ok=%d refused=%d, node connections %d: want the two observer channels only", ok, refused, len(h.Hub.Conns()))
	}
	st, err := client.Status(h.Ctx)
	if err != nil || st.Mode != config.ModeObserver || st.Connection.Registered {
		t.Fatalf("status mode %q, connection %+v (%v)", st.Mode, st.Connection, err)
	}
	var apiErr *controlapi.APIError
	if _, err := client.Register(h.Ctx); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || !strings.Contains(apiErr.Message, "no distributed session") {
		t.Fatalf("register in observer mode: %v", err)
	}
}

// [observer] enabled = true is mode "both": the node connection and the
// observer channels.
func TestObserverEnabledIsModeBoth(t *testing.T) {
	h, client := observerHarness(t, nil) // accepts the node connection
	h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	st, err := client.Status(h.Ctx)
	if err != nil || st.Mode != config.ModeBoth {
		t.Fatalf("status mode %q (%v)", st.Mode, err)
	}
}

// The node's own session is untouched by an observer drop.
func TestObserverConnectionsBesideTheNode(t *testing.T) {
	h, client := observerHarness(t, nil)
	logConn := h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	if logConn.Device() != "test-node" {
		t.Fatalf("deviceName %q, want the node name", logConn.Device())
	}
	st := waitObserversConnected(t, h, client, 1)
	if st.Observers[0].Channel != "VCPlog" || st.Observers[1].Channel != "vcpinfo" {
		t.Fatalf("observers %+v", st.Observers)
	}
	nodeConn := h.Hub.Conns()[0]

	// A dropped observer connection comes back; the node session is untouched.
	logConn.Drop()
	again := h.AcceptObserver(demohub.ChannelVCPLog)
	if again.Device() != "test-node" {
		t.Fatalf("reconnected as %q", again.Device())
	}
	waitObserversConnected(t, h, client, 2)
	if s, _ := h.Node.State(); s.Sessions != 1 || s.Phase != node.PhaseConnected {
		t.Fatalf("node state after an observer drop: %+v", s)
	}
	if conns := h.Hub.Conns(); len(conns) != 1 || conns[0] != nodeConn {
		t.Fatalf("node connection changed: %v", conns)
	}
	h.Call(nodeConn, "Echo", map[string]any{"message": "still here"})
}

// Server and node events in one GET /v1/events stream.
func TestEventsStreamServerAndNode(t *testing.T) {
	h, client := observerHarness(t, nil)
	h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	h.Hub.LogToolResult("Weather", "success", "Sunny\nand warm")
	ev := nextEvent(t, h, evs)
	if ev.Source != controlapi.EventSourceServer || ev.Kind != controlapi.EventToolLog || ev.Tool != "Weather" || ev.Status != "success" || ev.Text != "Sunny\nand warm" || ev.Channel != "VCPlog" {
		t.Fatalf("vcp_log event %+v", ev)
	}
	if _, err := h.Hub.BroadcastJSON(demohub.ChannelVCPInfo, "plugin_status", map[string]string{"message": "indexing done"}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, h, evs)
	if ev.Kind != controlapi.EventInfo || ev.Type != "plugin_status" || ev.Text != "indexing done" || ev.Channel != "vcpinfo" {
		t.Fatalf("vcpinfo event %+v", ev)
	}

	h.Call(h.Hub.Conns()[0], "Echo", map[string]any{"message": "hello"})
	start := nextEvent(t, h, evs)
	end := nextEvent(t, h, evs)
	if start.Kind != controlapi.EventCallStart || start.Source != controlapi.EventSourceNode || start.Tool != "Echo" {
		t.Fatalf("start %+v", start)
	}
	if end.Kind != controlapi.EventCallEnd || end.Status != "ok" || end.DurationMs == nil || end.RequestID != start.RequestID || !strings.Contains(end.Text, "hello") {
		t.Fatalf("end %+v", end)
	}

	// Filters: only the server's, only one tool.
	serverOnly := eventStream(t, h, client, controlapi.EventsQuery{EventFilter: controlapi.EventFilter{Source: controlapi.EventSourceServer, Tool: "B"}})
	h.Call(h.Hub.Conns()[0], "Echo", map[string]any{"message": "x"})
	h.Hub.LogToolResult("A", "success", "a")
	h.Hub.LogToolResult("B", "error", "b failed")
	if ev := nextEvent(t, h, serverOnly); ev.Tool != "B" || ev.Status != "error" {
		t.Fatalf("filtered stream gave %+v", ev)
	}
	// The backlog holds what was published before the stream began.
	backlog := eventStream(t, h, client, controlapi.EventsQuery{Backlog: true, EventFilter: controlapi.EventFilter{Tool: "Weather"}})
	if ev := nextEvent(t, h, backlog); ev.Tool != "Weather" || ev.Kind != controlapi.EventToolLog {
		t.Fatalf("backlog %+v", ev)
	}
}

// Server approvals answered through the control API.
func TestServerApprovalsFromTheCLIAPI(t *testing.T) {
	h, client := observerHarness(t, nil)
	h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	ask := func(tool string, ttl time.Duration) string {
		id, err := h.Hub.RequestApproval(demohub.ApprovalRequest{ToolName: tool, Maid: "Nova", Args: map[string]any{"command": "rm -rf /tmp/x"}, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if ev := nextEvent(t, h, evs, controlapi.EventApprovalAnswered); ev.Kind != controlapi.EventApprovalRequest || ev.RequestID != id || ev.Maid != "Nova" {
			t.Fatalf("approval event %+v", ev)
		}
		return id
	}
	approved := ask("Shell", time.Minute)
	denied := ask("Shell", time.Minute)
	list, err := client.Approvals(h.Ctx)
	if err != nil || len(list.Pending) != 2 {
		t.Fatalf("approvals = %+v, %v", list, err)
	}
	p := list.Pending[0]
	if p.ID != approved || p.Where != controlapi.WaitsOnServer || p.TTLMs != 60000 || p.Tool != "Shell" || string(p.Args["command"]) != `"rm -rf /tmp/x"` {
		t.Fatalf("listed %+v", p)
	}
	if _, err := client.Decide(h.Ctx, approved, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Decide(h.Ctx, denied, false, "not on my machine"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		approved: `{"type":"tool_approval_response","data":{"requestId":"` + approved + `","approved":true,"reason":""}}`,
		denied:   `{"type":"tool_approval_response","data":{"requestId":"` + denied + `","approved":false,"reason":"not on my machine"}}`,
	} {
		ans, err := h.Hub.WaitApprovalAnswer(h.Ctx, id)
		if err != nil || string(ans.Raw) != want {
			t.Fatalf("hub got %s (%v), want %s", ans.Raw, err, want)
		}
	}
	// Answered ones are gone; answering again is a clear error.
	if list, _ := client.Approvals(h.Ctx); len(list.Pending) != 0 {
		t.Fatalf("answered approvals still listed: %+v", list.Pending)
	}
	var apiErr *controlapi.APIError
	if _, err := client.Decide(h.Ctx, approved, true, ""); !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Fatalf("second answer: %v", err)
	}

	// Expiry: the approval disappears when its window passes. The window
	// runs from the server's send, and one that is over on arrival is
	// dropped unseen: 2 s leaves a loaded machine room to deliver it.
	short := ask("Shell", 2*time.Second)
	for {
		ev := nextEvent(t, h, evs, controlapi.EventApprovalAnswered)
		if ev.Kind == controlapi.EventApprovalExpired && ev.RequestID == short {
			break
		}
	}
	if list, _ := client.Approvals(h.Ctx); len(list.Pending) != 0 {
		t.Fatalf("expired approval still listed: %+v", list.Pending)
	}
	if _, err := h.Hub.WaitApprovalAnswer(h.Ctx, short); !errors.Is(err, demohub.ErrApprovalExpired) {
		t.Fatalf("hub side of the expired approval: %v", err)
	}
}

// The node's own approvals become events.
func TestLocalApprovalIsAnEvent(t *testing.T) {
	h := nodetest.Start(t, nodetest.Options{Config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask"}}
	}})
	conn := h.Accept()
	_, client := h.Control("")
	evs := eventStream(t, h, client, controlapi.EventsQuery{EventFilter: controlapi.EventFilter{Source: controlapi.EventSourceNode}})
	result := h.AsyncCall(conn, "r-1", "Echo", map[string]string{"message": "hi"})
	ev := nextEvent(t, h, evs, controlapi.EventCallStart)
	if ev.Kind != controlapi.EventApprovalRequest || ev.ApprovalID != "1" || ev.RequestID != "r-1" || ev.Tool != "Echo" || !strings.Contains(ev.Text, `message="hi"`) {
		t.Fatalf("approval event %+v", ev)
	}
	if _, err := client.Decide(h.Ctx, "1", false, "no"); err != nil {
		t.Fatal(err)
	}
	<-result
	if ev := nextEvent(t, h, evs); ev.Kind != controlapi.EventCallEnd || ev.Approval != "denied" || ev.Status != "denied" && ev.Status != "error" {
		t.Fatalf("end event %+v", ev)
	}
}

// The node's session lives through the observer's reconnect.
func TestObserverWithoutPongsReconnects(t *testing.T) {
	h, client := observerHarness(t, func(c *config.Config) {
		// The node's own session shares these, and must live through a
		// descheduled test process: 1.1 s of silence, not 400 ms.
		c.Hub.PingInterval = config.Duration(100 * time.Millisecond)
		c.Hub.PongTimeout = config.Duration(time.Second)
	})
	logConn := h.AcceptObserver(demohub.ChannelVCPLog)
	h.AcceptObserver(demohub.ChannelVCPInfo)
	nodeConn := h.Hub.Conns()[0]
	logConn.StopPonging()
	h.AcceptObserver(demohub.ChannelVCPLog) // the node gave up on the silent one and reconnected
	<-logConn.Done()
	if logConn.PingsReceived() == 0 {
		t.Fatal("the node never pinged the observer connection")
	}
	st := waitObserversConnected(t, h, client, 2)
	if !strings.Contains(st.Observers[0].LastError, "no pong or frame from the server") {
		t.Fatalf("last error %q", st.Observers[0].LastError)
	}
	if s, _ := h.Node.State(); s.Sessions != 1 || h.Hub.Conns()[0] != nodeConn {
		t.Fatalf("the node session was disturbed: %+v", s)
	}
}
