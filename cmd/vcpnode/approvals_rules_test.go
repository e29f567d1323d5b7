package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// approve --always through the CLI: the next call runs unasked, also
// after a restart of the daemon over the same state directory; `approvals
// rules` and `config show` list the rule; `approvals forget` asks again;
// deny --always refuses the next call with its reason.
func TestApproveAlwaysCommand(t *testing.T) {
	state := t.TempDir()
	extra := "[plugins]\nstate_dir = \"" + state + "\"\n\n[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\n"
	d := startDaemon(t, extra)
	conn := d.accept()
	held := d.callAsync(conn, "Echo", map[string]any{"message": "first"})
	d.waitPending(1)
	code, out, errOut := d.ctl("approve", "1", "--always")
	if code != exitOK || out != "approved 1: Echo (request fh-1)\n"+
		"remembered: every later call of Echo runs without asking (vcpnode approvals forget Echo)\n" {
		t.Fatalf("approve --always = %d %q %s", code, out, errOut)
	}
	if res := d.result(held); res.Status != wsproto.StatusSuccess {
		t.Fatalf("approved call = %+v", res)
	}
	// Were it held, it would wait 2m, past the test's patience.
	if res := d.result(d.callAsync(conn, "Echo", map[string]any{"message": "second"})); res.Status != wsproto.StatusSuccess {
		t.Fatalf("the next call = %+v", res)
	}
	file := filepath.Join(state, config.ApprovalRulesFile)
	_, out, _ = d.ctl("approvals", "rules")
	wantLines(t, out, "RULE VERDICT TOOL COMMAND SINCE REASON",
		"kept in "+file+"; forget one with: vcpnode approvals forget RULE")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "Echo allow Echo (all) ") {
		t.Errorf("rules lack Echo:\n%s", out)
	}
	var rules controlapi.ApprovalRulesResponse
	d.ctlJSON(&rules, "approvals", "rules")
	if len(rules.Rules) != 1 || rules.Rules[0].ID != "Echo" || rules.Rules[0].Verdict != "allow" || rules.File != file {
		t.Errorf("rules --json = %+v", rules)
	}
	ta := newTestApp(t)
	if code := ta.run("config", "show", "-c", d.configFile()); code != exitOK {
		t.Fatalf("config show: %s", ta.stderr)
	}
	wantLines(t, ta.stdout.String(), "# remembered approval answers from "+file+" (vcpnode approvals rules), before [tools.NAME] approval:", "# allow Echo")

	d.stop()
	d2 := startDaemon(t, extra)
	conn2 := d2.accept()
	if res := d2.result(d2.callAsync(conn2, "Echo", map[string]any{"message": "after restart"})); res.Status != wsproto.StatusSuccess {
		t.Fatalf("the first call after the restart = %+v", res)
	}
	if code, _, errOut := d2.ctl("approvals", "forget", "Nope"); code != exitError ||
		!strings.Contains(errOut, `no approval rule with this id: "Nope" (they are "Echo"; vcpnode approvals rules lists them)`) {
		t.Errorf("forget Nope = %d %s", code, errOut)
	}
	if code, _, errOut := d2.ctl("approvals", "forget"); code != exitUsage || !strings.Contains(errOut, "takes one rule") {
		t.Errorf("forget without a rule = %d %s", code, errOut)
	}
	if code, out, errOut := d2.ctl("approvals", "forget", "Echo"); code != exitOK || out != "forgot Echo: calls of Echo follow the config's approval again\n" {
		t.Fatalf("forget Echo = %d %q %s", code, out, errOut)
	}
	held = d2.callAsync(conn2, "Echo", map[string]any{"message": "asked again"})
	d2.waitPending(1)
	code, out, errOut = d2.ctl("deny", "1", "--always", "--reason", "no more")
	if code != exitOK || !strings.Contains(out, "remembered: every later call of Echo is refused without asking (vcpnode approvals forget Echo)") {
		t.Fatalf("deny --always = %d %q %s", code, out, errOut)
	}
	if res := d2.result(held); res.Error != `tool "Echo" denied by the node's owner: no more` {
		t.Errorf("denied call = %+v", res)
	}
	if res := d2.result(d2.callAsync(conn2, "Echo", nil)); res.Error != `tool "Echo" refused by the node's owner: no more` {
		t.Errorf("call under the deny rule = %+v", res)
	}
}

// A rules file the daemon cannot read: --always fails naming the file,
// the call stays pending for a plain answer, and `approvals rules` warns.
func TestApproveAlwaysCorruptFile(t *testing.T) {
	state := t.TempDir()
	writeAt(t, filepath.Join(state, config.ApprovalRulesFile), "not json")
	d := startDaemon(t, "[plugins]\nstate_dir = \""+state+"\"\n\n[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\n")
	conn := d.accept()
	held := d.callAsync(conn, "Echo", nil)
	d.waitPending(1)
	code, _, errOut := d.ctl("approve", "1", "--always")
	if code != exitError || !strings.Contains(errOut, "approval rules "+filepath.Join(state, config.ApprovalRulesFile)) {
		t.Fatalf("approve --always = %d %s", code, errOut)
	}
	_, out, _ := d.ctl("approvals", "rules")
	if !strings.HasPrefix(out, "warning: approval rules ") {
		t.Errorf("rules do not warn:\n%s", out)
	}
	if code, _, errOut := d.ctl("approve", "1"); code != exitOK {
		t.Fatalf("approve: %s", errOut)
	}
	d.result(held)
}

// deny --always answers the call it names and, at once, every other call
// of that tool already waiting for the owner (they would otherwise wait
// until their approval expires, past the test's patience).
func TestDenyAlwaysDeniesWaitingCalls(t *testing.T) {
	extra := "[plugins]\nstate_dir = \"" + t.TempDir() + "\"\n\n[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\n"
	d := startDaemon(t, extra)
	conn := d.accept()
	first := d.callAsync(conn, "Echo", map[string]any{"message": "first"})
	d.waitPending(1)
	second := d.callAsync(conn, "Echo", map[string]any{"message": "second"})
	d.waitPending(2)
	if code, out, errOut := d.ctl("deny", "1", "--always", "--reason", "not today"); code != exitOK {
		t.Fatalf("deny --always = %d %q %s", code, out, errOut)
	}
	if res := d.result(first); res.Error != `tool "Echo" denied by the node's owner: not today` {
		t.Errorf("the denied call = %+v", res)
	}
	if res := d.result(second); res.Status != wsproto.StatusError || res.Error != `tool "Echo" refused by the node's owner: not today` {
		t.Errorf("the other waiting call = %+v", res)
	}
	d.waitPending(0)
}
