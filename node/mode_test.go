package node

import (
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// registerFrames counts the register_tools a connection has sent.
func registerFrames(c *demohub.Conn) int {
	n := 0
	for _, f := range c.Received() {
		if f.Msg != nil && f.Msg.MessageType() == wsproto.TypeRegisterTools {
			n++
		}
	}
	return n
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
