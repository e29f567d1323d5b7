package controlapi

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Paths of the owner's remembered answers.
const (
	// PathApprovalRules lists them (GET): ApprovalRulesResponse.
	PathApprovalRules = "/v1/approval-rules"
	// PathForgetRule removes one (POST ForgetRuleRequest): ForgetRuleResponse.
	// The id travels in the body: it may hold a "/" (tool/command).
	PathForgetRule = "/v1/approval-rules/forget"
)

// Verdicts of an ApprovalRule.
const (
	RuleAllow = "allow"
	RuleDeny  = "deny"
)

// ApprovalRule is an answer the owner asked the node to remember: every
// later call of Tool (of its Command alone, when set) from the server is
// approved or refused without asking.
type ApprovalRule struct {
	// ID is what `vcpnode approvals forget` takes: the tool, or "tool/command".
	ID      string    `json:"id"`
	Tool    string    `json:"tool"`
	Command string    `json:"command,omitempty"`
	Verdict string    `json:"verdict"` // RuleAllow or RuleDeny
	Reason  string    `json:"reason,omitempty"`
	Created time.Time `json:"created"`
}

// ApprovalRulesResponse is GET /v1/approval-rules.
type ApprovalRulesResponse struct {
	// File keeps the rules; empty when the node has no state directory
	// (then no rule can be remembered).
	File  string         `json:"file,omitempty"`
	Rules []ApprovalRule `json:"rules"`
	// Error says why File could not be read: the rules listed are the
	// last ones read well (none at start), and remembering or forgetting
	// is refused until the file is fixed and the daemon reloads.
	Error string `json:"error,omitempty"`
}

// ForgetRuleRequest is the body of POST /v1/approval-rules/forget.
type ForgetRuleRequest struct {
	ID string `json:"id"`
}

// ForgetRuleResponse is the answer to a forget: the rule removed.
type ForgetRuleResponse struct {
	Rule ApprovalRule `json:"rule"`
	File string       `json:"file"`
}

// DecideWith approves or denies a pending call as req says (a reason, an
// "always" rule).
func (c *ControlClient) DecideWith(ctx context.Context, id string, approve bool, req DecisionRequest) (DecisionResponse, error) {
	action := DecisionDeny
	if approve {
		action = DecisionApprove
	}
	var out DecisionResponse
	path := PathApprovals + "/" + url.PathEscape(id) + "/" + action
	return out, c.Do(ctx, http.MethodPost, path, req, &out)
}

// ApprovalRules lists the remembered answers.
func (c *ControlClient) ApprovalRules(ctx context.Context) (ApprovalRulesResponse, error) {
	var out ApprovalRulesResponse
	return out, c.Do(ctx, http.MethodGet, PathApprovalRules, nil, &out)
}

// ForgetRule removes the remembered answer id.
func (c *ControlClient) ForgetRule(ctx context.Context, id string) (ForgetRuleResponse, error) {
	var out ForgetRuleResponse
	return out, c.Do(ctx, http.MethodPost, PathForgetRule, ForgetRuleRequest{ID: id}, &out)
}
