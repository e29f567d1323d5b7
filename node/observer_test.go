package node

// The observer channels beside a running node; the observer's own tests
// are in package observer.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/fakehub"
)

func observerHarness(t *testing.T, hubOpts fakehub.Options, more func(*config.Config)) (*harness, *controlapi.ControlClient) {
	t.Helper()
	h := startHarness(t, harnessOpt{hubOpts: hubOpts, config: func(c *config.Config) {
		c.Observer.Enabled = true
		if more != nil {
			more(c)
		}
	}})
	h.accept()
	_, client := startControl(t, h, "")
	return h, client
}

func (h *harness) acceptObserver(channel string) *fakehub.ObserverConn {
	h.t.Helper()
	o, err := h.hub.AcceptObserver(h.ctx, channel)
	if err != nil {
		h.t.Fatalf("accept observer %s: %v", channel, err)
	}
	return o
}

// eventStream reads GET /v1/events into a channel.
func eventStream(t *testing.T, h *harness, c *controlapi.ControlClient, q controlapi.EventsQuery) <-chan controlapi.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(h.ctx)
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
	case <-h.ctx.Done():
		t.Fatal("event stream never started")
	}
	return out
}

// nextEvent returns the next event that is not of the skipped kinds.
func nextEvent(t *testing.T, h *harness, evs <-chan controlapi.Event, skip ...string) controlapi.Event {
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
		case <-h.ctx.Done():
			t.Fatal("no event came")
		}
	}
}

func waitObserversConnected(t *testing.T, h *harness, c *controlapi.ControlClient, sessions int) controlapi.StatusResponse {
	t.Helper()
	for {
		st, err := c.Status(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(st.Observers) == 2 && st.Observers[0].Sessions >= sessions // VCPlog's
		for _, o := range st.Observers {
			ok = ok && o.Phase == PhaseConnected
		}
		if ok {
			return st
		}
		select {
		case <-h.ctx.Done():
			t.Fatalf("observers never connected: %+v", st.Observers)
		case <-time.After(10 * time.Millisecond): // status has no change channel
		}
	}
}

// Stays with the node: the node's own session must be untouched by an observer drop.
func TestObserverConnectionsBesideTheNode(t *testing.T) {
	h, client := observerHarness(t, fakehub.Options{}, nil)
	logConn := h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	if logConn.Device() != "test-node" {
		t.Fatalf("deviceName %q, want the node name", logConn.Device())
	}
	st := waitObserversConnected(t, h, client, 1)
	if st.Observers[0].Channel != "VCPlog" || st.Observers[1].Channel != "vcpinfo" {
		t.Fatalf("observers %+v", st.Observers)
	}
	nodeConn := h.hub.Conns()[0]

	// A dropped observer connection comes back; the node session is untouched.
	logConn.Drop()
	again := h.acceptObserver(fakehub.ChannelVCPLog)
	if again.Device() != "test-node" {
		t.Fatalf("reconnected as %q", again.Device())
	}
	waitObserversConnected(t, h, client, 2)
	if s, _ := h.node.State(); s.Sessions != 1 || s.Phase != PhaseConnected {
		t.Fatalf("node state after an observer drop: %+v", s)
	}
	if conns := h.hub.Conns(); len(conns) != 1 || conns[0] != nodeConn {
		t.Fatalf("node connection changed: %v", conns)
	}
	h.call(nodeConn, "Echo", map[string]any{"message": "still here"})
}

// Stays with the node: server and node events in one GET /v1/events stream.
func TestEventsStreamServerAndNode(t *testing.T) {
	h, client := observerHarness(t, fakehub.Options{}, nil)
	h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	h.hub.LogToolResult("Weather", "success", "Sunny\nand warm")
	ev := nextEvent(t, h, evs)
	if ev.Source != controlapi.EventSourceServer || ev.Kind != controlapi.EventToolLog || ev.Tool != "Weather" || ev.Status != "success" || ev.Text != "Sunny\nand warm" || ev.Channel != "VCPlog" {
		t.Fatalf("vcp_log event %+v", ev)
	}
	if _, err := h.hub.BroadcastJSON(fakehub.ChannelVCPInfo, "plugin_status", map[string]string{"message": "indexing done"}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, h, evs)
	if ev.Kind != controlapi.EventInfo || ev.Type != "plugin_status" || ev.Text != "indexing done" || ev.Channel != "vcpinfo" {
		t.Fatalf("vcpinfo event %+v", ev)
	}

	h.call(h.hub.Conns()[0], "Echo", map[string]any{"message": "hello"})
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
	h.call(h.hub.Conns()[0], "Echo", map[string]any{"message": "x"})
	h.hub.LogToolResult("A", "success", "a")
	h.hub.LogToolResult("B", "error", "b failed")
	if ev := nextEvent(t, h, serverOnly); ev.Tool != "B" || ev.Status != "error" {
		t.Fatalf("filtered stream gave %+v", ev)
	}
	// The backlog holds what was published before the stream began.
	backlog := eventStream(t, h, client, controlapi.EventsQuery{Backlog: true, EventFilter: controlapi.EventFilter{Tool: "Weather"}})
	if ev := nextEvent(t, h, backlog); ev.Tool != "Weather" || ev.Kind != controlapi.EventToolLog {
		t.Fatalf("backlog %+v", ev)
	}
}

// Stays with the node: server approvals answered through the control API.
func TestServerApprovalsFromTheCLIAPI(t *testing.T) {
	h, client := observerHarness(t, fakehub.Options{}, nil)
	h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	ask := func(tool string, ttl time.Duration) string {
		id, err := h.hub.RequestApproval(fakehub.ApprovalRequest{ToolName: tool, Maid: "Nova", Args: map[string]any{"command": "rm -rf /tmp/x"}, TTL: ttl})
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
	list, err := client.Approvals(h.ctx)
	if err != nil || len(list.Pending) != 2 {
		t.Fatalf("approvals = %+v, %v", list, err)
	}
	p := list.Pending[0]
	if p.ID != approved || p.Where != controlapi.WaitsOnServer || p.TTLMs != 60000 || p.Tool != "Shell" || string(p.Args["command"]) != `"rm -rf /tmp/x"` {
		t.Fatalf("listed %+v", p)
	}
	if _, err := client.Decide(h.ctx, approved, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Decide(h.ctx, denied, false, "not on my machine"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		approved: `{"type":"tool_approval_response","data":{"requestId":"` + approved + `","approved":true,"reason":""}}`,
		denied:   `{"type":"tool_approval_response","data":{"requestId":"` + denied + `","approved":false,"reason":"not on my machine"}}`,
	} {
		ans, err := h.hub.WaitApprovalAnswer(h.ctx, id)
		if err != nil || string(ans.Raw) != want {
			t.Fatalf("hub got %s (%v), want %s", ans.Raw, err, want)
		}
	}
	// Answered ones are gone; answering again is a clear error.
	if list, _ := client.Approvals(h.ctx); len(list.Pending) != 0 {
		t.Fatalf("answered approvals still listed: %+v", list.Pending)
	}
	var apiErr *controlapi.APIError
	if _, err := client.Decide(h.ctx, approved, true, ""); !errors.As(err, &apiErr) || apiErr.Status != 404 {
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
	if list, _ := client.Approvals(h.ctx); len(list.Pending) != 0 {
		t.Fatalf("expired approval still listed: %+v", list.Pending)
	}
	if _, err := h.hub.WaitApprovalAnswer(h.ctx, short); !errors.Is(err, fakehub.ErrApprovalExpired) {
		t.Fatalf("hub side of the expired approval: %v", err)
	}
}

// Stays with the node: the node's own approvals become events.
func TestLocalApprovalIsAnEvent(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask"}}
	}})
	conn := h.accept()
	_, client := startControl(t, h, "")
	evs := eventStream(t, h, client, controlapi.EventsQuery{EventFilter: controlapi.EventFilter{Source: controlapi.EventSourceNode}})
	result := asyncCall(h, conn, "r-1", "Echo", map[string]string{"message": "hi"})
	ev := nextEvent(t, h, evs, controlapi.EventCallStart)
	if ev.Kind != controlapi.EventApprovalRequest || ev.ApprovalID != "1" || ev.RequestID != "r-1" || ev.Tool != "Echo" || !strings.Contains(ev.Text, `message="hi"`) {
		t.Fatalf("approval event %+v", ev)
	}
	if _, err := client.Decide(h.ctx, "1", false, "no"); err != nil {
		t.Fatal(err)
	}
	<-result
	if ev := nextEvent(t, h, evs); ev.Kind != controlapi.EventCallEnd || ev.Approval != "denied" || ev.Status != "denied" && ev.Status != "error" {
		t.Fatalf("end event %+v", ev)
	}
}

// Stays with the node: the node's session must live through the observer's reconnect.
func TestObserverWithoutPongsReconnects(t *testing.T) {
	h, client := observerHarness(t, fakehub.Options{}, func(c *config.Config) {
		// The node's own session shares these, and must live through a
		// descheduled test process: 1.1 s of silence, not 400 ms.
		c.Hub.PingInterval = config.Duration(100 * time.Millisecond)
		c.Hub.PongTimeout = config.Duration(time.Second)
	})
	logConn := h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	nodeConn := h.hub.Conns()[0]
	logConn.StopPonging()
	h.acceptObserver(fakehub.ChannelVCPLog) // the node gave up on the silent one and reconnected
	<-logConn.Done()
	if logConn.PingsReceived() == 0 {
		t.Fatal("the node never pinged the observer connection")
	}
	st := waitObserversConnected(t, h, client, 2)
	if !strings.Contains(st.Observers[0].LastError, "no pong or frame from the server") {
		t.Fatalf("last error %q", st.Observers[0].LastError)
	}
	if s, _ := h.node.State(); s.Sessions != 1 || h.hub.Conns()[0] != nodeConn {
		t.Fatalf("the node session was disturbed: %+v", s)
	}
}
