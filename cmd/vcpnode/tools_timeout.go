package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

func newToolsTimeoutCmd(a *app) *cobra.Command {
	var f controlFlags
	cmd := &cobra.Command{
		Use:   "timeout NAME DURATION|default",
		Short: "Set one tool's timeout on the running daemon, or give it back to the config",
		Long: "timeout sets the timeout of the tool NAME on the running daemon, as the web\n" +
			"console's Tools page does: the value is checked like [tools.NAME] timeout\n" +
			"(1s to about 24 days), kept in the state directory beside the console's other\n" +
			"switches, applied at once (the node reconnects so the server is told the new\n" +
			"timeout) and kept across reloads and restarts. \"default\" removes it: the config\n" +
			"file's value (or the tool's own) applies again. `vcpnode config show` and\n" +
			"`vcpnode tools` show it.",
		Example: "  vcpnode tools timeout WebSearch 2m\n" +
			"  vcpnode tools timeout WebSearch default",
		Args: exactArgs(2, fmt.Sprintf("a tool name and a timeout (\"45s\", \"2m\" or %q)", config.TimeoutDefault)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, value := args[0], args[1]
			if _, err := config.ParseToolTimeout(value); err != nil {
				return usageErrorf("%v", err)
			}
			set := func(c *controlapi.ControlClient, ctx context.Context) (controlapi.ToolOverrideResponse, error) {
				return c.ToolOverride(ctx, name, controlapi.ToolOverrideRequest{Timeout: value})
			}
			return askDaemon(a, cmd, &f, set, func(w io.Writer, r controlapi.ToolOverrideResponse) error {
				msg := fmt.Sprintf("%s: timeout %s, kept in %s", r.Tool, r.Override.Timeout, r.File)
				if r.Override.Timeout == 0 {
					msg = fmt.Sprintf("%s: timeout back to the config's value", r.Tool)
				}
				return printSwitched(w, msg, r.ReloadReport)
			})
		},
	}
	f.add(cmd, true)
	cmd.ValidArgsFunction = a.ctlCompletion(&f, toolNames)
	return cmd
}
