package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestSandboxCheck: `vcpnode sandbox check` says of every protection of a
// profile whether it holds here, one a line, and backs the launcher's part
// with a probe started under the profile; none under "none"; an unknown
// profile is an error.
func TestSandboxCheck(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	work := t.TempDir()
	code, out, errOut := vcpnodeProc(t, work, "sandbox", "check", "offline")
	if code != 0 {
		t.Fatalf("sandbox check offline: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], `profile "offline" for a daemon run as uid `) {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{"enforced      network: none", "enforced      probe: no capabilities",
		"enforced      probe: no_new_privs"} {
		if !strings.Contains(out, "\n"+want) {
			t.Errorf("output lacks a line starting %q:\n%s", want, out)
		}
	}
	// Held or not, the line about other tools' command lines is there.
	if !strings.Contains(out, "  other tools' command lines, status and the process list hidden — ") {
		t.Errorf("output lacks the line on other tools' command lines:\n%s", out)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, sandbox.StateEnforced+" ") && !strings.HasPrefix(l, sandbox.StateNotEnforced+" ") &&
			!strings.HasPrefix(l, sandbox.StateNotAsked+" ") && !strings.HasPrefix(l, "not enforced for the profiles in use") {
			t.Errorf("a line without its state: %q", l)
		}
	}

	code, out, errOut = vcpnodeProc(t, work, "sandbox", "check", "--json", "default")
	var rep sandboxCheckReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Profile != "default" || len(rep.Protections) < 20 {
		t.Fatalf("sandbox check --json default: exit %d %+v\n%s", code, rep, errOut)
	}
	probes, nsHeld := 0, false
	for _, p := range rep.Protections {
		if strings.HasPrefix(p.Name, "other tools' command lines") {
			nsHeld = p.State == sandbox.StateEnforced
		}
		if strings.HasPrefix(p.Name, "probe: ") {
			probes++
			if p.State != sandbox.StateEnforced {
				t.Errorf("%s: %s (%s)", p.Name, p.State, p.Detail)
			}
		}
	}
	// Capabilities, no_new_privs, the filter; the bounding set where it is
	// emptied; the PID namespace, /proc and /dev/shm where calls get them.
	want := 3
	if os.Geteuid() == 0 || nsHeld {
		want++
	}
	if nsHeld {
		want += 3
	}
	if probes != want {
		t.Errorf("%d probe lines, want %d", probes, want)
	}

	if code, out, _ := vcpnodeProc(t, work, "sandbox", "check", "none"); code != 0 || !strings.Contains(out, "NOT ENFORCED  confinement") {
		t.Errorf("sandbox check none: exit %d\n%s", code, out)
	}
	if code, _, errOut := vcpnodeProc(t, work, "sandbox", "check", "nosuch"); code == 0 || !strings.Contains(errOut, `unknown sandbox profile "nosuch"`) {
		t.Errorf("unknown profile: exit %d %s", code, errOut)
	}
}
