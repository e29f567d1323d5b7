package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
)

// `tools timeout` sets and resets a tool's timeout on the daemon, `tools`
// shows it, and a value outside [tools.NAME] timeout's range is a usage
// error that changes nothing.
func TestToolsTimeoutCommand(t *testing.T) {
	d := startDaemon(t, "\n[plugins]\nstate_dir = \""+t.TempDir()+"\"\n")
	code, out, errOut := d.ctl("tools", "timeout", "Echo", "45s")
	if code != exitOK || !strings.HasPrefix(out, "Echo: timeout 45s, kept in ") {
		t.Fatalf("tools timeout Echo 45s: exit %d, %q %s", code, out, errOut)
	}
	if _, out, _ := d.ctl("tools"); !strings.Contains(out, "45s (set)") {
		t.Errorf("tools after the change:\n%s", out)
	}
	var tools controlapi.ToolsResponse
	d.ctlJSON(&tools, "tools")
	for _, ts := range tools.Tools {
		if ts.Name == "Echo" && (ts.TimeoutMs != 45000 || ts.Override == nil || ts.Override.Timeout.String() != "45s") {
			t.Errorf("Echo in tools --json: %+v", ts)
		}
	}
	for _, bad := range [][]string{{"Echo", "-5s"}, {"Echo", "999h"}, {"Echo"}} {
		if code, _, errOut := d.ctl(append([]string{"tools", "timeout"}, bad...)...); code != exitUsage || errOut == "" {
			t.Errorf("tools timeout %q: exit %d %q, want a usage error", bad, code, errOut)
		}
	}
	if code, _, errOut := d.ctl("tools", "timeout", "Nope", "45s"); code == exitOK || !strings.Contains(errOut, "Nope") {
		t.Errorf("tools timeout Nope: exit %d %q", code, errOut)
	}
	code, out, errOut = d.ctl("tools", "timeout", "Echo", "default")
	if code != exitOK || !strings.HasPrefix(out, "Echo: timeout back to the config's value") {
		t.Fatalf("tools timeout Echo default: exit %d, %q %s", code, out, errOut)
	}
	if _, out, _ := d.ctl("tools"); strings.Contains(out, "(set)") {
		t.Errorf("tools after default:\n%s", out)
	}
}
