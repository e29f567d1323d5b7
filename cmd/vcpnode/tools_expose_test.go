package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// `tools expose` switches a tool off and on on the daemon as the console
// does: the server's registration follows at once, `tools` shows the switch;
// hidden_tools still wins and the command says so; a value other than on or
// off is a usage error, an unknown tool and a tool without a switch are
// refused, and none of them changes anything.
func TestToolsExposeCommand(t *testing.T) {
	d := startDaemon(t, "hidden_tools = [\"NodeInfo\"]\n\n[plugins]\nstate_dir = \""+t.TempDir()+"\"\n")
	conn := d.accept()
	if got := nextRegistered(t, d, conn); !slices.Contains(got, "Echo") {
		t.Fatalf("registered before the switch: %v", got)
	}

	code, out, errOut := d.ctl("tools", "expose", "Echo", "off")
	if code != exitOK || !strings.HasPrefix(out, "Echo: not exposed, kept in ") || !strings.Contains(out, "the node reconnected") {
		t.Fatalf("tools expose Echo off: exit %d, %q %s", code, out, errOut)
	}
	if got := nextRegistered(t, d, d.accept()); slices.Contains(got, "Echo") {
		t.Errorf("registered after expose off: %v", got)
	}
	echo := daemonTool(t, d, "Echo")
	if echo.Exposed || echo.Override == nil || echo.Override.Expose == nil || *echo.Override.Expose || echo.Reason != "[tools.Echo] expose = false" {
		t.Errorf("Echo in tools --json after off: %+v", echo)
	}
	if _, out, _ := d.ctl("tools"); strings.Contains(out, "Echo") {
		t.Errorf("tools lists Echo as exposed after off:\n%s", out)
	}

	code, out, errOut = d.ctl("tools", "expose", "Echo", "on")
	if code != exitOK || !strings.HasPrefix(out, "Echo: exposed, kept in ") {
		t.Fatalf("tools expose Echo on: exit %d, %q %s", code, out, errOut)
	}
	if got := nextRegistered(t, d, d.accept()); !slices.Contains(got, "Echo") {
		t.Errorf("registered after expose on: %v", got)
	}

	// hidden_tools wins over the switch: kept, but said.
	code, out, errOut = d.ctl("tools", "expose", "NodeInfo", "on")
	if code != exitOK || !strings.Contains(out, "NodeInfo: expose on kept in ") || !strings.Contains(out, "but it stays not exposed: hidden by hidden_tools") {
		t.Errorf("tools expose NodeInfo on: exit %d, %q %s", code, out, errOut)
	}
	var res exposeOutcome
	d.ctlJSON(&res, "tools", "expose", "NodeInfo", "on")
	if res.Tool != "NodeInfo" || res.Exposed || res.Override.Expose == nil || !*res.Override.Expose || res.File == "" {
		t.Errorf("tools expose NodeInfo on --json: %+v", res)
	}

	before := daemonTools(t, d)
	for _, bad := range [][]string{{"Echo", "yes"}, {"Echo", "ON"}, {"Echo"}, {"Echo", "on", "off"}} {
		if code, _, errOut := d.ctl(append([]string{"tools", "expose"}, bad...)...); code != exitUsage || errOut == "" {
			t.Errorf("tools expose %q: exit %d %q, want a usage error", bad, code, errOut)
		}
	}
	if code, _, errOut := d.ctl("tools", "expose", "Nope", "on"); code == exitOK || !strings.Contains(errOut, `"Nope"`) {
		t.Errorf("tools expose Nope: exit %d %q", code, errOut)
	}
	implicit := ""
	for _, ts := range before {
		if ts.Implicit {
			implicit = ts.Name
		}
	}
	if implicit == "" {
		t.Fatal("the daemon has no tool the server calls by name")
	}
	if code, _, errOut := d.ctl("tools", "expose", implicit, "off"); code == exitOK || !strings.Contains(errOut, "has no expose switch") {
		t.Errorf("tools expose %s off: exit %d %q", implicit, code, errOut)
	}
	if after := daemonTools(t, d); !slices.EqualFunc(before, after, func(a, b controlapi.ToolStatus) bool {
		return a.Name == b.Name && a.Exposed == b.Exposed && (a.Override == nil) == (b.Override == nil)
	}) {
		t.Errorf("refused switches changed the tools:\n%+v\n%+v", before, after)
	}
}

// nextRegistered are the names conn's next register_tools carries.
func nextRegistered(t *testing.T, d *testDaemon, conn *demohub.Conn) []string {
	t.Helper()
	m, err := conn.WaitType(d.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	return registeredNames(m.(wsproto.RegisterTools))
}

// daemonTools is `tools --json` of the daemon.
func daemonTools(t *testing.T, d *testDaemon) []controlapi.ToolStatus {
	t.Helper()
	var tools controlapi.ToolsResponse
	d.ctlJSON(&tools, "tools")
	return tools.Tools
}

// daemonTool is name in `tools --json` of the daemon.
func daemonTool(t *testing.T, d *testDaemon, name string) controlapi.ToolStatus {
	t.Helper()
	for _, ts := range daemonTools(t, d) {
		if ts.Name == name {
			return ts
		}
	}
	t.Fatalf("the daemon lists no %s", name)
	return controlapi.ToolStatus{}
}
