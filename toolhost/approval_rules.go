package toolhost

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ApprovalRule is an answer the owner asked the node to remember
// (`vcpnode approve ID --always`, `deny ID --always`): every later remote
// call of Tool, or of its Command alone when Command is set, is approved
// or refused without asking.
type ApprovalRule struct {
	Tool string `json:"tool"`
	// Command is the command of a multi-command tool (a plugin's
	// invocation command, an MCP server's tool) the rule is limited to;
	// empty covers the whole tool.
	Command string `json:"command,omitempty"`
	// Verdict is RuleAllow or RuleDeny.
	Verdict string `json:"verdict"`
	// Reason is added to the error the server sees for a refused call.
	Reason  string    `json:"reason,omitempty"`
	Created time.Time `json:"created"`
}

// Rule verdicts.
const (
	RuleAllow = "allow"
	RuleDeny  = "deny"
)

// ErrNoSuchRule: Forget was given an id no rule has.
var ErrNoSuchRule = errors.New("no approval rule with this id")

// ID names the rule for `vcpnode approvals forget`: the tool, or
// "tool/command".
func (r ApprovalRule) ID() string {
	if r.Command == "" {
		return r.Tool
	}
	return r.Tool + "/" + r.Command
}

// Check reports what makes r unusable.
func (r ApprovalRule) Check() error {
	switch {
	case strings.TrimSpace(r.Tool) == "":
		return errors.New("a rule names no tool")
	case r.Verdict != RuleAllow && r.Verdict != RuleDeny:
		return fmt.Errorf("rule %s: verdict %q is not %q or %q", r.ID(), r.Verdict, RuleAllow, RuleDeny)
	}
	return nil
}

// ApprovalRules is a set of rules, at most one per tool and command.
type ApprovalRules []ApprovalRule

// With returns the set with r in it, replacing the rule of the same tool
// and command. The receiver is not changed.
func (rs ApprovalRules) With(r ApprovalRule) (ApprovalRules, error) {
	if err := r.Check(); err != nil {
		return rs, err
	}
	r.Reason = cleanReason(r.Reason)
	out := slices.DeleteFunc(slices.Clone(rs), func(o ApprovalRule) bool { return o.Tool == r.Tool && o.Command == r.Command })
	if i := slices.IndexFunc(out, func(o ApprovalRule) bool { return o.ID() == r.ID() }); i >= 0 {
		return rs, fmt.Errorf("rule %s would have the id of the rule for tool %q, command %q: forget that one first", r.ID(), out[i].Tool, out[i].Command)
	}
	out = append(out, r)
	out.sort()
	return out, nil
}

// Without returns the set without the rule named id, and that rule.
func (rs ApprovalRules) Without(id string) (ApprovalRules, ApprovalRule, error) {
	i := slices.IndexFunc(rs, func(r ApprovalRule) bool { return r.ID() == id })
	if i < 0 {
		ids := make([]string, len(rs))
		for j, r := range rs {
			ids[j] = r.ID()
		}
		known := "there are none"
		if len(ids) > 0 {
			known = "they are " + quoteList(ids)
		}
		return rs, ApprovalRule{}, fmt.Errorf("%w: %q (%s; vcpnode approvals rules lists them)", ErrNoSuchRule, id, known)
	}
	return slices.Delete(slices.Clone(rs), i, i+1), rs[i], nil
}

// Check reports the first unusable rule or a tool and command with two.
func (rs ApprovalRules) Check() error {
	seen := map[[2]string]bool{}
	for _, r := range rs {
		if err := r.Check(); err != nil {
			return err
		}
		k := [2]string{r.Tool, r.Command}
		if seen[k] {
			return fmt.Errorf("two rules for %s", r.ID())
		}
		seen[k] = true
	}
	return nil
}

func (rs ApprovalRules) sort() {
	slices.SortFunc(rs, func(a, b ApprovalRule) int {
		return cmp.Or(strings.Compare(a.Tool, b.Tool), strings.Compare(a.Command, b.Command))
	})
}

func (rs ApprovalRules) find(tool, command string) (ApprovalRule, bool) {
	i := slices.IndexFunc(rs, func(r ApprovalRule) bool { return r.Tool == tool && r.Command == command })
	if i < 0 {
		return ApprovalRule{}, false
	}
	return rs[i], true
}

// SetApprovalRules puts rs in force for every later call, and for the
// calls awaiting the owner now: one the rules now deny is refused at once,
// one they now allow runs at once, the others wait on.
func (d *Dispatcher) SetApprovalRules(rs ApprovalRules) {
	c := slices.Clone(rs)
	c.sort()
	d.rules.Store(&c)
	pol := d.view.Load().policy
	for _, p := range d.approvals.Pending() {
		d.mu.Lock()
		call, ok := d.calls[p.RequestID]
		d.mu.Unlock()
		if !ok {
			continue
		}
		mode, _ := pol.Approval(call.spec)
		v := approvalGate(pol, c, call.name, mode, call.command)
		if v.mode == ApprovalAsk {
			continue
		}
		reason := ""
		if v.rule != nil {
			reason = v.rule.Reason
		}
		// A call decided meanwhile (answered, expired) is not pending: fine.
		_, _ = d.approvals.decide(p.ID, verdict{allow: v.mode != ApprovalDeny, reason: cleanReason(reason), rule: true})
	}
}

// ApprovalRules returns the rules in force.
func (d *Dispatcher) ApprovalRules() ApprovalRules {
	if p := d.rules.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// gateVerdict is how the approval gate treats one remote call.
type gateVerdict struct {
	mode ApprovalMode
	// rule is the remembered rule that decided, if one did.
	rule *ApprovalRule
}

// approvalGate decides a gated call of the tool s with args. The sources,
// from the most specific: a rule for the call's command, the command's
// setting ([tools.NAME.commands.CMD] approval), a rule for the tool, the
// tool's mode (Policy.Approval: [tools.NAME] approval, the console's
// switch, else the tool's own default, else "auto"). "deny" from any of
// them wins; otherwise the most specific one that says anything decides
// (an allow rule reads as "auto").
func approvalGate(p *Policy, rules ApprovalRules, tool string, toolMode ApprovalMode, cmd string) gateVerdict {
	o := p.Tools[tool]
	type source struct {
		mode ApprovalMode
		rule *ApprovalRule
	}
	var sources []source
	addRule := func(command string) {
		if r, ok := rules.find(tool, command); ok {
			mode := ApprovalAuto
			if r.Verdict == RuleDeny {
				mode = ApprovalDeny
			}
			sources = append(sources, source{mode, &r})
		}
	}
	if cmd != "" {
		addRule(cmd)
		if m := o.Commands[cmd]; m != "" {
			sources = append(sources, source{mode: m})
		}
	}
	addRule("")
	sources = append(sources, source{mode: cmp.Or(toolMode, ApprovalAuto)})
	for _, src := range sources {
		if src.mode == ApprovalDeny {
			return gateVerdict{ApprovalDeny, src.rule}
		}
	}
	return gateVerdict{sources[0].mode, sources[0].rule}
}

// CallCommand is the command a call of s addresses, as the dispatcher
// selects it (exactly, else case-insensitively), for per-command approval:
// "" for a tool with fewer than two commands (its one command is the whole
// tool) or a call that selects none.
func CallCommand(s Spec, args map[string]json.RawMessage) string {
	if !multiCommand(s) {
		return ""
	}
	c, problem := selectCommand(s, args)
	if problem != "" {
		return ""
	}
	return c.Command
}
