package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
)

// Command groups of `vcpnode --help`.
const (
	groupSetup   = "setup"
	groupDaemon  = "daemon"
	groupControl = "control"
	groupText    = "text"
)

// newRootCmd builds the whole command line, every command listed here, so
// that the tree is visible in one place and each call gets a fresh one
// (tests build as many as they like). A new command is one line in the
// right group; its constructor lives in a file named for the command.
//
// Flag conventions every command follows: --config/-c FILE is the config
// file (found as configPath says when absent), --socket PATH the daemon's
// control socket, --json prints the output as JSON. Value names in usage
// strings are backquoted (`FILE`), which pflag shows after the flag.
func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "vcpnode",
		Short: "Run this machine as a distributed node of a VCP main server",
		Long: "vcpnode keeps a WebSocket connection to a VCP main server (VCPToolBox), registers\n" +
			"the tools this machine hosts and runs them when the server asks.",
		SilenceErrors: true, // main prints them, prefixed
		SilenceUsage:  true,
		Args:          noSubcommand,
		RunE:          helpAndFail,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	if a.stdin != nil {
		root.SetIn(a.stdin)
	}
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "", "log `LEVEL`, overriding the config: "+strings.Join(config.LogLevels, ", "))
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "", "log `FORMAT`, overriding the config: "+strings.Join(config.LogFormats, ", "))

	h := a.host
	if h == nil {
		h = realHost()
	}
	root.AddGroup(
		&cobra.Group{ID: groupSetup, Title: "Set up:"},
		&cobra.Group{ID: groupDaemon, Title: "Run the node:"},
		&cobra.Group{ID: groupControl, Title: "Ask the running daemon:"},
		&cobra.Group{ID: groupText, Title: "Read model replies:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupSetup,
		newInitCmd(a, h),
		newConfigCmd(a),
		newServiceCmd(a, h),
	)
	add(groupDaemon,
		newRunCmd(a),
		newDemoCmd(a),
		newSandboxCmd(a),
	)
	// Thin clients of the control socket: flags → one request → render.
	add(groupControl,
		newStatusCmd(a),
		newHealthCmd(a),
		newToolsCmd(a),
		newCallCmd(a),
		newMCPCmd(a),
		newServerCmd(a),
		newPlaceholdersCmd(a),
		newWatchCmd(a),
		newApprovalsCmd(a),
		newApproveCmd(a),
		newDenyCmd(a),
		newReloadCmd(a),
		newReconnectCmd(a),
		newRegisterCmd(a),
		newConsoleCmd(a),
	)
	// Works on text alone, no daemon needed.
	add(groupText, newParseCmd(a))
	add(groupSetup, newVersionCmd(a))
	root.SetHelpCommandGroupID(groupSetup)
	root.SetCompletionCommandGroupID(groupSetup)

	a.finishTree(root)
	return root
}

// finishTree applies what every command shares: flag errors are usage
// errors, and help for a command that does not exist is an error too
// (cobra would print the parent's help and exit 0).
func (a *app) finishTree(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		if pos := cmd.Flags().Args(); cmd.HasAvailableSubCommands() && len(pos) > 0 {
			a.helpErr = noSubcommand(cmd, pos)
			return
		}
		defaultHelp(cmd, args)
	})
}
