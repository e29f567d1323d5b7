package node

import (
	"errors"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
)

// The owner's remembered answers (`approve ID --always`, `deny ID
// --always`) live in config.ApprovalRulesFile in the state directory. The
// daemon reads the file at start and at every reload and puts the rules in
// force in the dispatcher; it writes the file, atomically, on each change.
// A file it cannot read is reported and never overwritten: the rules read
// last stay in force (none at start), and changes are refused until the
// file is fixed and the daemon reloads.

var (
	// errServerAlways: --always on one of the server's approvals.
	errServerAlways = errors.New("--always remembers answers for this node's own calls; the server's approvals are answered one at a time")
	// errNoRulesFile: no state directory, so rules cannot be kept.
	errNoRulesFile = errors.New("remembered answers need a state directory: set [plugins] state_dir")
)

// ruleStore is where the rules are kept; the rules in force are the
// dispatcher's.
type ruleStore struct {
	mu     sync.Mutex // one change at a time
	path   string     // "" without a state directory
	broken error      // why path could not be read at the last load
}

// loadApprovalRules reads the rules file of cfg's state directory and
// puts its rules in force; on an error the rules in force stay.
func (n *Node) loadApprovalRules(cfg config.Config) {
	s := &n.rules
	s.mu.Lock()
	defer s.mu.Unlock()
	path, err := cfg.ApprovalRulesPath(n.getenv, os.Geteuid())
	if err != nil {
		s.path, s.broken = "", nil
		n.disp.SetApprovalRules(nil)
		return
	}
	s.path = path
	rs, err := toolconfig.LoadApprovalRules(path)
	if err != nil {
		s.broken = err
		n.log.Error().Err(err).Int("rules_in_force", len(n.disp.ApprovalRules())).
			Msg("approval rules not read; the file is left as it is and no rule is remembered or forgotten until it is fixed (then vcpnode reload)")
		return
	}
	s.broken = nil
	n.disp.SetApprovalRules(rs)
}

// changeRules applies change to the rules in force, saves them and puts
// them in force (which decides the waiting calls they now decide); saved
// runs between the two. Under s.mu.
func (n *Node) changeRules(change func(toolhost.ApprovalRules) (toolhost.ApprovalRules, error), saved func()) error {
	s := &n.rules
	switch {
	case s.path == "":
		return answerWith(http.StatusConflict, errNoRulesFile)
	case s.broken != nil:
		return answerWith(http.StatusConflict, s.broken)
	}
	next, err := change(n.disp.ApprovalRules())
	if err != nil {
		return err
	}
	if err := toolconfig.SaveApprovalRules(s.path, next); err != nil {
		return answerWith(http.StatusInternalServerError, err)
	}
	if saved != nil {
		saved()
	}
	n.disp.SetApprovalRules(next)
	return nil
}

// rememberRule keeps the owner's answer to the pending call p for every
// later call of its tool (and command), and for the calls of it already
// waiting; answer, run once the rule is saved and before it is in force,
// answers p itself, so the owner's own answer is the one p gets.
func (n *Node) rememberRule(p toolhost.PendingApproval, approve bool, reason string, answer func()) (controlapi.ApprovalRule, error) {
	r := toolhost.ApprovalRule{Tool: p.Tool, Command: p.Command, Verdict: toolhost.RuleDeny, Reason: reason, Created: time.Now().UTC()}
	if approve {
		r.Verdict, r.Reason = toolhost.RuleAllow, ""
	}
	n.rules.mu.Lock()
	defer n.rules.mu.Unlock()
	err := n.changeRules(func(rs toolhost.ApprovalRules) (toolhost.ApprovalRules, error) {
		next, err := rs.With(r)
		if err != nil {
			return nil, answerWith(http.StatusConflict, err)
		}
		return next, nil
	}, answer)
	if err != nil {
		return controlapi.ApprovalRule{}, err
	}
	n.log.Info().Str("rule", r.ID()).Str("verdict", r.Verdict).Msg("approval rule remembered")
	return ruleStatus(r), nil
}

// ApprovalRules lists the rules in force (GET /v1/approval-rules).
func (n *Node) ApprovalRules() controlapi.ApprovalRulesResponse {
	n.rules.mu.Lock()
	defer n.rules.mu.Unlock()
	out := controlapi.ApprovalRulesResponse{File: n.rules.path, Rules: []controlapi.ApprovalRule{}}
	if n.rules.broken != nil {
		out.Error = n.rules.broken.Error()
	}
	for _, r := range n.disp.ApprovalRules() {
		out.Rules = append(out.Rules, ruleStatus(r))
	}
	return out
}

// ForgetRule removes the rule id: its tool's calls are asked about (or
// not) as the config says again.
func (n *Node) ForgetRule(id string) (controlapi.ForgetRuleResponse, error) {
	n.rules.mu.Lock()
	defer n.rules.mu.Unlock()
	var gone toolhost.ApprovalRule
	err := n.changeRules(func(rs toolhost.ApprovalRules) (toolhost.ApprovalRules, error) {
		next, r, err := rs.Without(id)
		if err != nil {
			return nil, answerWith(http.StatusNotFound, err)
		}
		gone = r
		return next, nil
	}, nil)
	if err != nil {
		return controlapi.ForgetRuleResponse{}, err
	}
	n.log.Info().Str("rule", gone.ID()).Msg("approval rule forgotten")
	return controlapi.ForgetRuleResponse{Rule: ruleStatus(gone), File: n.rules.path}, nil
}

func ruleStatus(r toolhost.ApprovalRule) controlapi.ApprovalRule {
	return controlapi.ApprovalRule{ID: r.ID(), Tool: r.Tool, Command: r.Command, Verdict: r.Verdict, Reason: r.Reason, Created: r.Created}
}
