package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

// The VCP server's own tools, reached through its VCPToolBridge plugin.

const bridgePrefix = "vcp_" // the local name of a server tool: vcp_<Name>

func newServerCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "List and run the VCP server's own tools (through its VCPToolBridge plugin)",
		Long: "server reaches the VCP server's own tools from this machine: the server's\n" +
			"VCPToolBridge plugin lists them to connected nodes and runs them on their behalf.\n" +
			"The daemon asks for the list on every connect; `server tools` shows it, and\n" +
			"`server call` runs one like `vcpnode call` runs a local tool. In the daemon each\n" +
			"is the tool vcp_<Name>: [tools.vcp_<Name>] approval, the audit file, the metrics\n" +
			"and `vcpnode watch` apply; [bridge] offer gives them to MCP clients.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newServerToolsCmd(a), newServerCallCmd(a))
	return cmd
}

func newServerToolsCmd(a *app) *cobra.Command {
	var f controlFlags
	var refresh bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools the VCP server offers to nodes, with their commands",
		Long: "tools lists the server's own tools as the daemon last heard them: name, the local\n" +
			"name (vcp_<Name>), whether [bridge] offer gives it to MCP clients, the description and\n" +
			"each command. When the server offers none it says why in plain words. --refresh asks\n" +
			"the server again first; --json prints the whole answer.",
		Example: "  vcpnode server tools\n  vcpnode server tools --refresh --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ctx, done, err := a.controlClient(cmd.Context(), &f, controlTimeout)
			if err != nil {
				return err
			}
			defer done()
			res, err := c.ServerTools(ctx, refresh)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(a.stdout, res)
			}
			a.printServerTools(res)
			return nil
		},
	}
	f.add(cmd, true)
	cmd.Flags().BoolVar(&refresh, "refresh", false, "ask the server for its list again first")
	return cmd
}

func (a *app) printServerTools(res controlapi.ServerToolsResponse) {
	if res.Error != "" {
		fmt.Fprintf(a.stderr, "refresh: %s\n", res.Error)
	}
	fmt.Fprintf(a.stdout, "%s\n", res.Message)
	for _, t := range res.Tools {
		offered := "not offered to MCP clients"
		if t.Offered {
			offered = "offered to MCP clients"
		}
		title := t.Name
		if t.DisplayName != "" && t.DisplayName != t.Name {
			title += " (" + t.DisplayName + ")"
		}
		fmt.Fprintf(a.stdout, "\n%s  as %s, %s\n", title, t.Local, offered)
		if d := strings.TrimSpace(t.Description); d != "" {
			fmt.Fprintf(a.stdout, "  %s\n", indentLines(d, "  "))
		}
		for _, c := range t.Commands {
			name := c.Command
			if name == "" {
				name = "(no command name)"
			}
			fmt.Fprintf(a.stdout, "  command %s", name)
			if d := strings.TrimSpace(c.Description); d != "" {
				fmt.Fprintf(a.stdout, ": %s", indentLines(d, "    "))
			}
			fmt.Fprintln(a.stdout)
		}
	}
}

func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

func newServerCallCmd(a *app) *cobra.Command {
	var f controlFlags
	var argsJSON string
	cmd := &cobra.Command{
		Use:   "call NAME [key=value | key:=JSON]...",
		Short: "Run one of the VCP server's tools and print its result",
		Long: "call runs the server's tool NAME (its name on the server, as `server tools` lists\n" +
			"it) through the daemon, which sends it over its connection to the server's\n" +
			"VCPToolBridge; the arguments are given as for `vcpnode call`. An asynchronous tool's\n" +
			"final result is waited for. Unlike a local tool's, the call passes the approval\n" +
			"gate even though the owner makes it ([tools.vcp_<Name>] approval = \"ask\" waits\n" +
			"for `vcpnode approve`): it acts beyond this machine. The audit file and the\n" +
			"metrics record it. It exits 1 when the\n" +
			"server answers with an error. A name the daemon has no tool of is told why: the\n" +
			"server's list does not hold it (the list's size and age, the likely name), the\n" +
			"list has not come yet, the server has no bridge, or no connection.",
		Example: "  vcpnode server call SciCalculator expression='2+2'\n" +
			"  vcpnode server call ScheduleManager --args '{\"command\": \"ListSchedules\"}' --json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%q needs the name of a server tool (vcpnode server tools lists them)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			toolArgs, err := parseCallArgs(argsJSON, args[1:])
			if err != nil {
				return err
			}
			c, ctx, done, err := a.controlClient(cmd.Context(), &f, 0)
			if err != nil {
				return err
			}
			defer done()
			// The daemon says why a name has no tool: not in the server's
			// list (of what age), no bridge, no list yet, no connection.
			name := strings.TrimPrefix(args[0], bridgePrefix)
			return a.runCall(ctx, c, bridgePrefix+name, toolArgs, f.json)
		},
	}
	f.add(cmd, true)
	cmd.Flags().StringVar(&argsJSON, "args", "", "the arguments as one `JSON` object; key=value pairs override it")
	return cmd
}

// serverToolsLine is status's line about the server's own tools.
func serverToolsLine(b *controlapi.ServerToolsStatus) string {
	if b.State == "offered" && b.Tools > 0 {
		return fmt.Sprintf("%s, %d offered to MCP clients (vcpnode server tools)", b.Message, b.Offered)
	}
	return b.Message
}
