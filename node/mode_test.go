package node

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// registerFrames counts the register_tools a connection has sent.
func registerFrames(c *fakehub.Conn) int {
	n := 0
	for _, f := range c.Received() {
		if f.Msg != nil && f.Msg.MessageType() == wsproto.TypeRegisterTools {
			n++
		}
	}
	return n
}

// Observer mode keeps only the observer channels, and answers the
// server's approval requests from the daemon through them.
func TestObserverModeOpensNoDistributedSession(t *testing.T) {
	// The key in the path only: the handshakes counted below are the observers'.
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.Mode = config.ModeObserver; c.Hub.Auth = "path" }})
	_, client := startControl(t, h, "")
	h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	evs := eventStream(t, h, client, controlapi.EventsQuery{})

	id, err := h.hub.RequestApproval(fakehub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, h, evs); ev.Kind != controlapi.EventApprovalRequest || ev.RequestID != id {
		t.Fatalf("approval event %+v", ev)
	}
	if _, err := client.Decide(h.ctx, id, false, "not now"); err != nil {
		t.Fatal(err)
	}
	if ans, err := h.hub.WaitApprovalAnswer(h.ctx, id); err != nil || ans.Approved || ans.Reason != "not now" {
		t.Fatalf("hub got %+v, %v", ans, err)
	}

	// By now a node connection, dialled at start, would have been made.
	if ok, refused := h.hub.Handshakes(); ok != 2 || refused != 0 || len(h.hub.Conns()) != 0 {
		t.Fatalf("handshakes ok=%d refused=%d, node connections %d: want the two observer channels only", ok, refused, len(h.hub.Conns()))
	}
	st, err := client.Status(h.ctx)
	if err != nil || st.Mode != config.ModeObserver || st.Connection.Registered {
		t.Fatalf("status mode %q, connection %+v (%v)", st.Mode, st.Connection, err)
	}
	var apiErr *controlapi.APIError
	if _, err := client.Register(h.ctx); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || !strings.Contains(apiErr.Message, "no distributed session") {
		t.Fatalf("register in observer mode: %v", err)
	}
}

// [observer] enabled = true is mode "both": the node connection and the
// observer channels.
func TestObserverEnabledIsModeBoth(t *testing.T) {
	h, client := observerHarness(t, fakehub.Options{}, nil) // accepts the node connection
	h.acceptObserver(fakehub.ChannelVCPLog)
	h.acceptObserver(fakehub.ChannelVCPInfo)
	waitObserversConnected(t, h, client, 1)
	st, err := client.Status(h.ctx)
	if err != nil || st.Mode != config.ModeBoth {
		t.Fatalf("status mode %q (%v)", st.Mode, err)
	}
}

// register = false connects and reports the addresses, but registers the
// tools only after `vcpnode register`; later connections register at once.
func TestRegisterFalseWaitsForTheRegisterCommand(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.Register = false }})
	_, client := startControl(t, h, "")
	conn := h.accept()
	if _, err := conn.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	// At connect register_tools goes before report_ip: none so far is none at connect.
	h.waitState("connected", func(s ConnState) bool { return s.Phase == PhaseConnected })
	st, err := client.Status(h.ctx)
	if err != nil || st.Connection.Registered || !st.Connection.ToolsHeld || st.Connection.Phase != PhaseConnected {
		t.Fatalf("status before register: %+v (%v)", st.Connection, err)
	}
	// A call still works both ways: the tools are there, only unregistered.
	if res := h.call(conn, "Echo", map[string]any{"text": "hi"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call before register: %+v", res)
	}
	if n := registerFrames(conn); n != 0 {
		t.Fatalf("%d register_tools before vcpnode register", n)
	}

	rep, err := client.Register(h.ctx)
	if err != nil || !rep.Registering {
		t.Fatalf("register: %+v, %v", rep, err)
	}
	m, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.(wsproto.RegisterTools).Tools) == 0 {
		t.Fatal("register_tools without tools")
	}
	h.waitState("registered", func(s ConnState) bool { return s.Registered })
	if st, err := client.Status(h.ctx); err != nil || !st.Connection.Registered || st.Connection.ToolsHeld {
		t.Fatalf("status after register: %+v (%v)", st.Connection, err)
	}
	if rep, err := client.Register(h.ctx); err != nil || rep.Registering {
		t.Fatalf("second register: %+v, %v", rep, err)
	}

	// The next connection registers at connect, without being asked again.
	conn.Drop()
	conn2 := h.accept()
	if _, err := conn2.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
}
