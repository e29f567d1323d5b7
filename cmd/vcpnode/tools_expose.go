package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

// exposeOutcome is what `tools expose` prints: the switch as the daemon
// kept it, and the tool's exposure after it (hidden_tools still wins).
type exposeOutcome struct {
	controlapi.ToolOverrideResponse
	Exposed bool   `json:"exposed"`
	Reason  string `json:"reason"`
}

func newToolsExposeCmd(a *app) *cobra.Command {
	var f controlFlags
	cmd := &cobra.Command{
		Use:   "expose NAME on|off",
		Short: "Expose one tool to the server on the running daemon, or stop exposing it",
		Long: "expose switches whether the server may call the tool NAME, on the running daemon,\n" +
			"as the web console's Tools page does: like [tools.NAME] expose over the config\n" +
			"file, kept in the state directory beside the console's other switches, applied at\n" +
			"once (the node reconnects so the server sees the new tool set) and kept across\n" +
			"reloads and restarts. hidden_tools still wins over it. The console's \"Reset to\n" +
			"config\" gives the config file's rules back. `vcpnode tools --all` shows the\n" +
			"switch as the reason.",
		Example: "  vcpnode tools expose SystemInfo on\n" +
			"  vcpnode tools expose WebSearch off",
		Args: exactArgs(2, "a tool name and on or off"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			var on bool
			switch args[1] {
			case "on":
				on = true
			case "off":
			default:
				return usageErrorf("%q is not on or off", args[1])
			}
			set := func(c *controlapi.ControlClient, ctx context.Context) (exposeOutcome, error) {
				// The console offers no switch for a tool the server calls
				// by name or a folder that runs no tool; neither does this.
				before, err := exposable(ctx, c, name)
				if err != nil {
					return exposeOutcome{}, err
				}
				r, err := c.ToolOverride(ctx, name, controlapi.ToolOverrideRequest{Expose: &on})
				if err != nil {
					return exposeOutcome{}, err
				}
				out := exposeOutcome{ToolOverrideResponse: r, Exposed: before.Exposed, Reason: before.Reason}
				if after, err := findTool(ctx, c, name); err == nil {
					out.Exposed, out.Reason = after.Exposed, after.Reason
				}
				return out, nil
			}
			return askDaemon(a, cmd, &f, set, func(w io.Writer, r exposeOutcome) error {
				state := "not exposed"
				if r.Exposed {
					state = "exposed"
				}
				msg := fmt.Sprintf("%s: %s, kept in %s", r.Tool, state, r.File)
				if r.Exposed != on {
					msg = fmt.Sprintf("%s: expose %s kept in %s, but it stays %s: %s", r.Tool, args[1], r.File, state, r.Reason)
				}
				return printSwitched(w, msg, r.ReloadReport)
			})
		},
	}
	f.add(cmd, true)
	names := a.ctlCompletion(&f, toolNames)
	cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 1 {
			return []cobra.Completion{"on", "off"}, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
	return cmd
}

// exposable is the daemon's tool name when it has an expose switch.
func exposable(ctx context.Context, c *controlapi.ControlClient, name string) (controlapi.ToolStatus, error) {
	t, err := findTool(ctx, c, name)
	switch {
	case err != nil:
		return t, err
	case t.Skipped != "":
		return t, fmt.Errorf("%s runs as no tool (%s): %s", name, t.Skipped, t.Reason)
	case t.Implicit:
		return t, fmt.Errorf("%s is called by the server by name and never registered: it has no expose switch", name)
	}
	return t, nil
}

// findTool is the daemon's tool name.
func findTool(ctx context.Context, c *controlapi.ControlClient, name string) (controlapi.ToolStatus, error) {
	tools, err := c.Tools(ctx)
	if err != nil {
		return controlapi.ToolStatus{}, err
	}
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
	}
	return controlapi.ToolStatus{}, fmt.Errorf("the daemon has no tool %q", name)
}
