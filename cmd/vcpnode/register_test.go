package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// With register = false, status says the tools are held; `register`
// sends them, and status then says they are registered.
func TestRegisterCommand(t *testing.T) {
	d := startDaemon(t, "register = false\n") // under testHubConfig's [node]
	conn, err := d.hub.Accept(d.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.WaitType(d.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	for {
		s, changed := d.node.State()
		if s.Phase == controlapi.PhaseConnected {
			break
		}
		select {
		case <-changed:
		case <-d.ctx.Done():
			t.Fatalf("never connected: %+v", s)
		}
	}
	_, out, _ := d.ctl("status")
	if !strings.Contains(out, "tools not registered yet (register = false; vcpnode register)") {
		t.Fatalf("status before register:\n%s", out)
	}
	code, out, errOut := d.ctl("reconnect", "--timeout", "0")
	if code != exitOK || !strings.Contains(out, "tools held until vcpnode register") {
		t.Fatalf("reconnect while held: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = d.ctl("register")
	if code != exitOK || out != "registering the tools with the server\n" {
		t.Fatalf("register: exit %d, %q %s", code, out, errOut)
	}
	if _, err := conn.WaitType(d.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	var st controlapi.StatusResponse
	for {
		s, changed := d.node.State()
		if s.Registered {
			break
		}
		select {
		case <-changed:
		case <-d.ctx.Done():
			t.Fatalf("never registered: %+v", s)
		}
	}
	d.ctlJSON(&st, "status")
	if !st.Connection.Registered || st.Connection.ToolsHeld || st.Mode != "distributed" {
		t.Fatalf("status after register: mode %q, %+v", st.Mode, st.Connection)
	}
	if _, out, _ := d.ctl("register"); !strings.Contains(out, "nothing to do") {
		t.Fatalf("second register: %q", out)
	}
}
