package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

func TestApprovalGatePrecedence(t *testing.T) {
	allow := func(cmd string) ApprovalRule { return ApprovalRule{Tool: "F", Command: cmd, Verdict: RuleAllow} }
	deny := func(cmd string) ApprovalRule { return ApprovalRule{Tool: "F", Command: cmd, Verdict: RuleDeny} }
	tests := []struct {
		name     string
		tool     ApprovalMode            // [tools.F] approval
		commands map[string]ApprovalMode // [tools.F.commands.*] approval
		rules    ApprovalRules
		cmd      string // the call's command
		want     ApprovalMode
		byRule   string // the id of the rule that decided, "" for a setting
	}{
		{"nothing set", "", nil, nil, "", ApprovalAuto, ""},
		{"tool setting", ApprovalAsk, nil, nil, "read", ApprovalAsk, ""},
		{"tool allow rule over ask", ApprovalAsk, nil, ApprovalRules{allow("")}, "read", ApprovalAuto, "F"},
		{"command allow rule over ask", ApprovalAsk, nil, ApprovalRules{allow("read")}, "read", ApprovalAuto, "F/read"},
		{"a command rule covers that command only", ApprovalAsk, nil, ApprovalRules{allow("read")}, "delete", ApprovalAsk, ""},
		{"command setting over tool setting", ApprovalAsk, map[string]ApprovalMode{"read": ApprovalAuto}, nil, "read", ApprovalAuto, ""},
		{"command ask over tool auto", ApprovalAuto, map[string]ApprovalMode{"delete": ApprovalAsk}, nil, "delete", ApprovalAsk, ""},
		{"command ask over a tool allow rule", ApprovalAsk, map[string]ApprovalMode{"delete": ApprovalAsk}, ApprovalRules{allow("")}, "delete", ApprovalAsk, ""},
		{"command allow rule over command ask", "", map[string]ApprovalMode{"delete": ApprovalAsk}, ApprovalRules{allow("delete")}, "delete", ApprovalAuto, "F/delete"},
		{"tool deny setting over a command allow rule", ApprovalDeny, nil, ApprovalRules{allow("read")}, "read", ApprovalDeny, ""},
		{"tool deny setting over command auto", ApprovalDeny, map[string]ApprovalMode{"read": ApprovalAuto}, nil, "read", ApprovalDeny, ""},
		{"command deny setting over a tool allow rule", ApprovalAsk, map[string]ApprovalMode{"delete": ApprovalDeny}, ApprovalRules{allow("")}, "delete", ApprovalDeny, ""},
		{"tool deny rule over command auto", "", map[string]ApprovalMode{"read": ApprovalAuto}, ApprovalRules{deny("")}, "read", ApprovalDeny, "F"},
		{"command deny rule over tool allow rule", "", nil, ApprovalRules{allow(""), deny("delete")}, "delete", ApprovalDeny, "F/delete"},
		{"a call without a command ignores command rules", ApprovalAsk, map[string]ApprovalMode{"": ApprovalDeny}, ApprovalRules{allow("read")}, "", ApprovalAsk, ""},
		{"another tool's rule", ApprovalAsk, nil, ApprovalRules{{Tool: "G", Verdict: RuleAllow}}, "", ApprovalAsk, ""},
		{"a tool's own default", "", nil, nil, "", ApprovalAsk, ""}, // F declares "ask" (below)
		{"a tool allow rule over the tool's own default", "", nil, ApprovalRules{allow("")}, "", ApprovalAuto, "F"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Policy{Tools: map[string]ToolOverride{"F": {Approval: tt.tool, Commands: tt.commands}}}
			spec := Spec{Name: "F"}
			if strings.Contains(tt.name, "own default") {
				spec.Approval = ApprovalAsk
			}
			mode, _ := p.Approval(spec)
			v := approvalGate(p, tt.rules, "F", mode, tt.cmd)
			by := ""
			if v.rule != nil {
				by = v.rule.ID()
			}
			if v.mode != tt.want || by != tt.byRule {
				t.Errorf("gate = %s by rule %q, want %s by rule %q", v.mode, by, tt.want, tt.byRule)
			}
		})
	}
}

// filesTool has two named commands, as a multi-command plugin or an MCP
// server has.
func filesTool() funcTool {
	tool := newFuncTool("Files", func(_ context.Context, c Call) (any, error) {
		var cmd string
		json.Unmarshal(c.Args[schema.CommandArg], &cmd)
		return "ran " + cmd, nil
	})
	tool.spec.Commands = []Command{{Command: "read"}, {Command: "delete"}}
	return tool
}

func callCmd(tb testing.TB, d *Dispatcher, id, cmd string, r *replies) {
	tb.Helper()
	args := map[string]json.RawMessage{schema.CommandArg: json.RawMessage(`"` + cmd + `"`)}
	if !d.Dispatch(context.Background(), "Files", Call{RequestID: id, Args: args}, r.reply) {
		tb.Fatalf("Dispatch(%s) refused the call", id)
	}
}

// Rules are looked at for every call: an allow rule for one command lets
// it run unasked (recorded as "remembered"), the other command is still
// held and names its command; a deny rule refuses with its reason; the
// owner's own calls ignore rules.
func TestApprovalRulesInTheDispatcher(t *testing.T) {
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Minute, "Files"), Limits{}, filesTool())
	var recs records
	d.Observe(recs.add)
	r := newReplies()
	d.SetApprovalRules(ApprovalRules{{Tool: "Files", Command: "read", Verdict: RuleAllow}})

	callCmd(t, d, "r1", "READ", r) // selected case-insensitively, as the dispatcher runs it
	wantText(t, r.next(t), "r1", "ran READ")
	if rec, _ := recs.byID("r1"); rec.Approval != DecisionRemembered {
		t.Errorf("record = %+v, want approval remembered", rec)
	}

	callCmd(t, d, "r2", "delete", r)
	p := waitPending(t, d.Approvals(), 1)[0]
	if p.Tool != "Files" || p.Command != "delete" {
		t.Errorf("pending = %+v, want command delete", p)
	}
	if got, ok := d.Approvals().Get(p.ID); !ok || got.RequestID != "r2" {
		t.Errorf("Get(%s) = %+v, %t", p.ID, got, ok)
	}
	if _, err := d.Approvals().Decide(p.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	wantText(t, r.next(t), "r2", "ran delete")

	rs, err := d.ApprovalRules().With(ApprovalRule{Tool: "Files", Command: "delete", Verdict: RuleDeny, Reason: "not\nhere"})
	if err != nil {
		t.Fatal(err)
	}
	d.SetApprovalRules(rs)
	callCmd(t, d, "r3", "delete", r)
	wantErr(t, r.next(t), "r3", `tool "Files" refused by the node's owner: not here`, ErrRefused)
	if rec, _ := recs.byID("r3"); rec.Approval != DecisionRefused {
		t.Errorf("record = %+v, want refused", rec)
	}
	if !d.Dispatch(context.Background(), "Files", Call{RequestID: "own", Local: true,
		Args: map[string]json.RawMessage{schema.CommandArg: json.RawMessage(`"delete"`)}}, r.reply) {
		t.Fatal("Dispatch refused the local call")
	}
	wantText(t, r.next(t), "own", "ran delete")
	if n := d.Approvals().Len(); n != 0 {
		t.Errorf("%d approvals pending", n)
	}
}

func TestApprovalRulesSet(t *testing.T) {
	var rs ApprovalRules
	rs, err := rs.With(ApprovalRule{Tool: "B", Verdict: RuleAllow})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ = rs.With(ApprovalRule{Tool: "A", Command: "x", Verdict: RuleDeny})
	rs, _ = rs.With(ApprovalRule{Tool: "B", Verdict: RuleDeny, Reason: "changed my mind"}) // replaces
	if len(rs) != 2 || rs[0].ID() != "A/x" || rs[1].ID() != "B" || rs[1].Verdict != RuleDeny {
		t.Fatalf("rules = %+v", rs)
	}
	if _, err := rs.With(ApprovalRule{Tool: "A/x", Verdict: RuleAllow}); err == nil || !strings.Contains(err.Error(), "would have the id") {
		t.Errorf("a rule with a taken id = %v", err)
	}
	if _, err := rs.With(ApprovalRule{Tool: "C", Verdict: "maybe"}); err == nil {
		t.Error("verdict maybe accepted")
	}
	if _, err := rs.With(ApprovalRule{Verdict: RuleAllow}); err == nil {
		t.Error("a rule without a tool accepted")
	}
	left, gone, err := rs.Without("A/x")
	if err != nil || gone.Tool != "A" || len(left) != 1 || len(rs) != 2 {
		t.Errorf("Without(A/x) = %+v, %+v, %v (rules now %+v)", left, gone, err, rs)
	}
	if _, _, err := rs.Without("Nope"); !errors.Is(err, ErrNoSuchRule) || !strings.Contains(err.Error(), `they are "A/x", "B"`) {
		t.Errorf("Without(Nope) = %v", err)
	}
	if err := (ApprovalRules{{Tool: "A", Verdict: RuleAllow}, {Tool: "A", Verdict: RuleDeny}}).Check(); err == nil {
		t.Error("two rules for one tool passed Check")
	}
}

// A new rule reaches the calls already awaiting the owner: a deny rule
// refuses the waiting calls it matches at once (with its reason), an allow
// rule runs them at once, and a call no rule decides waits on.
func TestApprovalRulesApplyToWaitingCalls(t *testing.T) {
	d := newTestDispatcher(t, askPolicy(ApprovalAsk, time.Hour, "Files"), Limits{}, filesTool())
	var recs records
	d.Observe(recs.add)
	r := newReplies()
	callCmd(t, d, "d1", "delete", r)
	callCmd(t, d, "d2", "delete", r)
	callCmd(t, d, "r1", "read", r)
	waitPending(t, d.Approvals(), 3)

	rs, err := d.ApprovalRules().With(ApprovalRule{Tool: "Files", Command: "delete", Verdict: RuleDeny, Reason: "never delete"})
	if err != nil {
		t.Fatal(err)
	}
	d.SetApprovalRules(rs)
	got := map[string]Outcome{}
	for range 2 {
		o := r.next(t)
		got[o.RequestID] = o
	}
	for _, id := range []string{"d1", "d2"} {
		wantErr(t, got[id], id, `tool "Files" refused by the node's owner: never delete`, ErrRefused)
		if rec, _ := recs.byID(id); rec.Approval != DecisionRefused {
			t.Errorf("%s: record %+v, want refused", id, rec)
		}
	}
	if p := waitPending(t, d.Approvals(), 1); p[0].RequestID != "r1" {
		t.Fatalf("pending %+v, want r1 still waiting", p)
	}
	r.none(t)

	rs, _ = rs.With(ApprovalRule{Tool: "Files", Command: "read", Verdict: RuleAllow})
	d.SetApprovalRules(rs)
	wantText(t, r.next(t), "r1", "ran read")
	if rec, _ := recs.byID("r1"); rec.Approval != DecisionRemembered {
		t.Errorf("r1: record %+v, want remembered", rec)
	}
	waitPending(t, d.Approvals(), 0)
}
