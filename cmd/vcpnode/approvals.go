package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

// Widths of the arguments column of `vcpnode approvals`; --json shows them whole.
const (
	approvalArgWidth  = 40
	approvalArgsWidth = 100
)

func newApprovalsCmd(a *app) *cobra.Command {
	cmd := queryCmd(a, &cobra.Command{
		Use:   "approvals",
		Short: "List the calls waiting for your approval (tools with approval = \"ask\")",
		Long: "approvals lists the server's calls of tools configured with approval = \"ask\" that\n" +
			"wait for the owner: the tool, its arguments, how long it has waited and when it\n" +
			"will be refused unanswered. Answer with `vcpnode approve ID` or `vcpnode deny ID`.",
	}, (*controlapi.ControlClient).Approvals, printApprovals)
	cmd.AddCommand(newApprovalRulesCmd(a), newForgetRuleCmd(a))
	return cmd
}

func newApproveCmd(a *app) *cobra.Command {
	return newDecisionCmd(a, true)
}

func newDenyCmd(a *app) *cobra.Command {
	return newDecisionCmd(a, false)
}

func newDecisionCmd(a *app, approve bool) *cobra.Command {
	var f controlFlags
	var req controlapi.DecisionRequest
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Let a call waiting for approval run",
		Long: "approve lets the pending call ID (from `vcpnode approvals`) run now. With --always\n" +
			"the node first remembers the answer (in its state directory, across restarts):\n" +
			"later calls of the tool, or of the call's command when it has one, run without\n" +
			"asking. `vcpnode approvals rules` lists what is remembered; `vcpnode approvals\n" +
			"forget RULE` asks again.",
		Args: exactArgs(1, "one approval ID (vcpnode approvals lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			decide := func(c *controlapi.ControlClient, ctx context.Context) (controlapi.DecisionResponse, error) {
				return c.DecideWith(ctx, args[0], approve, req)
			}
			return askDaemon(a, cmd, &f, decide, func(w io.Writer, res controlapi.DecisionResponse) error {
				verb := "approved"
				if !approve {
					verb = "denied"
				}
				if _, err := fmt.Fprintf(w, "%s %s: %s (request %s)\n", verb, res.Approval.ID, res.Approval.Tool, res.Approval.RequestID); err != nil {
					return err
				}
				if res.Rule != nil {
					what := "runs"
					if !approve {
						what = "is refused"
					}
					_, err := fmt.Fprintf(w, "remembered: every later call of %s %s without asking (vcpnode approvals forget %s)\n",
						ruleScope(*res.Rule), what, res.Rule.ID)
					return err
				}
				return nil
			})
		},
	}
	alwaysHelp := "remember the answer: later calls of this tool (of this command, when the call has one) run without asking"
	if !approve {
		cmd.Use = "deny ID"
		cmd.Short = "Refuse a call waiting for approval"
		cmd.Long = "deny refuses the pending call ID (from `vcpnode approvals`); the server gets an\n" +
			"error saying the node's owner denied it, with --reason if given. With --always\n" +
			"the node first remembers the answer (in its state directory, across restarts):\n" +
			"later calls of the tool, or of the call's command when it has one, are refused\n" +
			"without asking, with the same reason."
		cmd.Flags().StringVar(&req.Reason, "reason", "", "`TEXT` saying why, added to the error the server (and the model) sees")
		alwaysHelp = "remember the answer: later calls of this tool (of this command, when the call has one) are refused without asking"
	}
	cmd.Flags().BoolVar(&req.Always, "always", false, alwaysHelp)
	f.add(cmd, true)
	cmd.ValidArgsFunction = a.ctlCompletion(&f, func(ctx context.Context, c *controlapi.ControlClient) ([]string, error) {
		list, err := c.Approvals(ctx)
		ids := make([]string, 0, len(list.Pending))
		for _, p := range list.Pending {
			ids = append(ids, p.ID+"\t"+p.Tool+" "+ctlClip(argSummary(p.Args), approvalArgsWidth))
		}
		return ids, err
	})
	return cmd
}

func printApprovals(w io.Writer, list controlapi.ApprovalsResponse) error {
	if len(list.Pending) == 0 {
		_, err := fmt.Fprintln(w, "no calls are waiting for approval")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWHERE\tTOOL\tREQUEST\tWAITING\tREFUSED IN\tARGUMENTS")
	for _, p := range list.Pending {
		where, request, refused := p.Where, p.RequestID, ctlAge(p.Expires.Sub(list.Now))
		if where == "" {
			where = controlapi.WaitsOnNode // a daemon older than server approvals
		}
		if where == controlapi.WaitsOnServer {
			// The id is the server's requestId; say who asked instead.
			request = "-"
			if p.Maid != "" {
				request = "by " + p.Maid
			}
			refused += " of " + ctlAge(time.Duration(p.TTLMs)*time.Millisecond)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, where, p.Tool, request,
			ctlAge(list.Now.Sub(p.Requested)), refused, ctlClip(argSummary(p.Args), approvalArgsWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "answer with: vcpnode approve ID, or vcpnode deny ID [--reason TEXT]")
	return err
}

// argSummary writes arguments as key=value pairs, sorted, strings unquoted
// unless they hold spaces, each value clipped.
func argSummary(args map[string]json.RawMessage) string {
	if len(args) == 0 {
		return "(none)"
	}
	parts := make([]string, 0, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		var s string
		value := ""
		if json.Unmarshal(args[k], &s) == nil {
			value = ctlClip(s, approvalArgWidth)
			if strings.ContainsAny(value, " \t") || value == "" {
				value = strconv.Quote(value)
			}
		} else {
			var compact bytes.Buffer
			if json.Compact(&compact, args[k]) != nil {
				compact.Write(args[k])
			}
			value = ctlClip(compact.String(), approvalArgWidth)
		}
		parts = append(parts, k+"="+value)
	}
	return strings.Join(parts, " ")
}

func newApprovalRulesCmd(a *app) *cobra.Command {
	return queryCmd(a, &cobra.Command{
		Use:   "rules",
		Short: "List the answers remembered with approve/deny --always",
		Long: "rules lists the answers the node remembers (`vcpnode approve ID --always`, `deny ID\n" +
			"--always`, the console's Always buttons): each rule lets every call of a tool, or of\n" +
			"one of its commands, run or be refused without asking. `vcpnode approvals forget\n" +
			"RULE` removes one.",
	}, (*controlapi.ControlClient).ApprovalRules, printApprovalRules)
}

func newForgetRuleCmd(a *app) *cobra.Command {
	var f controlFlags
	cmd := &cobra.Command{
		Use:   "forget RULE",
		Short: "Forget a remembered answer: its calls are asked about again",
		Long: "forget removes the remembered answer RULE (the tool, or TOOL/COMMAND, as\n" +
			"`vcpnode approvals rules` lists it): calls it covered follow the config's\n" +
			"approval setting again.",
		Args: exactArgs(1, "one rule (vcpnode approvals rules lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			forget := func(c *controlapi.ControlClient, ctx context.Context) (controlapi.ForgetRuleResponse, error) {
				return c.ForgetRule(ctx, args[0])
			}
			return askDaemon(a, cmd, &f, forget, func(w io.Writer, res controlapi.ForgetRuleResponse) error {
				_, err := fmt.Fprintf(w, "forgot %s: calls of %s follow the config's approval again\n", res.Rule.ID, ruleScope(res.Rule))
				return err
			})
		},
	}
	f.add(cmd, true)
	cmd.ValidArgsFunction = a.ctlCompletion(&f, func(ctx context.Context, c *controlapi.ControlClient) ([]string, error) {
		list, err := c.ApprovalRules(ctx)
		ids := make([]string, 0, len(list.Rules))
		for _, r := range list.Rules {
			ids = append(ids, r.ID+"\t"+r.Verdict)
		}
		return ids, err
	})
	return cmd
}

// ruleScope names what a rule covers: "Echo", or "FileOps command delete".
func ruleScope(r controlapi.ApprovalRule) string {
	if r.Command == "" {
		return r.Tool
	}
	return r.Tool + " command " + r.Command
}

func printApprovalRules(w io.Writer, res controlapi.ApprovalRulesResponse) error {
	if res.Error != "" {
		fmt.Fprintf(w, "warning: %s\n", res.Error)
	}
	if len(res.Rules) == 0 {
		msg := "no answers are remembered (approve ID --always or deny ID --always remembers one)"
		if res.File == "" {
			msg = "no answers are remembered, and none can be: set [plugins] state_dir"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tVERDICT\tTOOL\tCOMMAND\tSINCE\tREASON")
	for _, r := range res.Rules {
		cmd, reason, since := r.Command, r.Reason, "-"
		if cmd == "" {
			cmd = "(all)"
		}
		if reason == "" {
			reason = "-"
		}
		if !r.Created.IsZero() {
			since = r.Created.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Verdict, r.Tool, cmd, since, reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "kept in %s; forget one with: vcpnode approvals forget RULE\n", res.File)
	return err
}
