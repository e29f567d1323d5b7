package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
)

// The name the server sees of a renamed tool is shown by tools (text and
// JSON) and status (text and JSON), not only in register_tools.
func TestRenamedToolsShownByToolsAndStatus(t *testing.T) {
	d := startDaemon(t, "tool_names = \"{tool}_{node}\"\n\n[tools.NodeInfo]\nname = \"Info_A\"\nexpose = true\n")
	d.accept()

	code, out, errOut := d.ctl("tools")
	if code != exitOK || !strings.Contains(out, "on the server: Echo as Echo_laptop, NodeInfo as Info_A\n") || strings.Contains(out, "ReadFile") {
		t.Fatalf("tools: %d\n%s\n%s", code, out, errOut)
	}
	// --all lists the tools not exposed too, with the name they would get.
	code, out, errOut = d.ctl("tools", "--all")
	if code != exitOK || !strings.Contains(out, "ReadFile as ReadFile_laptop") || strings.Contains(out, "internal_request_file as") {
		t.Fatalf("tools --all: %d\n%s\n%s", code, out, errOut)
	}
	var tools controlapi.ToolsResponse
	d.ctlJSON(&tools, "tools")
	for _, ts := range tools.Tools {
		if ts.Name == "Echo" && ts.ServerName != "Echo_laptop" {
			t.Fatalf("tools --json: Echo's serverName = %q", ts.ServerName)
		}
	}

	code, out, errOut = d.ctl("status")
	if code != exitOK || !strings.Contains(out, "Echo as Echo_laptop, NodeInfo as Info_A") {
		t.Fatalf("status: %d\n%s\n%s", code, out, errOut)
	}
	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	if st.ServerNames["Echo"] != "Echo_laptop" || st.ServerNames["NodeInfo"] != "Info_A" || len(st.ServerNames) != 2 {
		t.Fatalf("status --json serverNames = %v", st.ServerNames)
	}
}

// Without renaming, neither listing speaks of server names.
func TestUnrenamedToolsShowNoServerNames(t *testing.T) {
	d := startDaemon(t, "")
	d.accept()
	if code, out, _ := d.ctl("tools", "--all"); code != exitOK || strings.Contains(out, "on the server:") {
		t.Fatalf("tools --all: %d\n%s", code, out)
	}
	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	if st.ServerNames != nil {
		t.Fatalf("status --json serverNames = %v", st.ServerNames)
	}
}
