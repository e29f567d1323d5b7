package main

import (
	"context"
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
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

func newToolsCmd(a *app) *cobra.Command {
	var f controlFlags
	var all, prompt bool
	var format string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the running daemon's tools: exposed or not and why, timeout, limits, approval",
		Long: "tools lists the tools the running daemon hosts. Without --all only the tools the\n" +
			"server may call are listed; --all adds the others, and for every tool the reason\n" +
			"it is exposed or not (policy, hidden_tools, built-in, manifest).\n\n" +
			"--prompt prints instead what a model is told about the exposed tools: the text the\n" +
			"server builds from register_tools for {{VCPAllTools}} (--format vcp, the default),\n" +
			"<<<[TOOL_DEFINITION]>>> blocks (vcp-definition), the XML format's <functions> block and\n" +
			"<output_instructions> (xml), the tools of an OpenAI (openai), Anthropic (anthropic)\n" +
			"or Gemini (gemini) request, or, for a model without native function calling, the\n" +
			"tools and the instructions to call them in a text format 'vcpnode parse' reads:\n" +
			"tool_code (<tool_code>{\"name\", \"arguments\"}), function_call (<function_call>, the\n" +
			"same payload) or json ({\"tool_name\", \"parameters\"}). json no longer means openai:\n" +
			"it is the format 'vcpnode parse' calls json.",
		Example: "  vcpnode tools --all\n" +
			"  vcpnode tools --prompt --format xml",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("format") && !prompt {
				return usageErrorf("--format chooses the --prompt format; add --prompt")
			}
			if prompt {
				if _, ok := textproto.PromptFormat(format); !ok {
					return usageErrorf("--format %q is not one of %s", format, strings.Join(textproto.PromptFormats, ", "))
				}
				ask := func(c *controlapi.ControlClient, ctx context.Context) (controlapi.PromptResponse, error) {
					return c.Prompt(ctx, format)
				}
				return askDaemon(a, cmd, &f, ask, func(w io.Writer, r controlapi.PromptResponse) error {
					_, err := fmt.Fprintln(w, r.Text)
					return err
				})
			}
			list := func(c *controlapi.ControlClient, ctx context.Context) (controlapi.ToolsResponse, error) {
				tools, err := c.Tools(ctx)
				return controlapi.ToolsResponse{Tools: tools}, err
			}
			return askDaemon(a, cmd, &f, list, func(w io.Writer, r controlapi.ToolsResponse) error {
				return printTools(w, r.Tools, all)
			})
		},
	}
	f.add(cmd, true)
	cmd.AddCommand(newToolsExposeCmd(a), newToolsTimeoutCmd(a))
	cmd.Flags().BoolVarP(&all, "all", "a", false, "list the tools that are not exposed too, with the reason for each")
	cmd.Flags().BoolVar(&prompt, "prompt", false, "print what a model is told about the exposed tools")
	cmd.Flags().StringVar(&format, "format", textproto.PromptVCP, "the --prompt `FORMAT`: "+strings.Join(textproto.PromptFormats, ", ")+" (json is the {\"tool_name\"} text format, not openai)")
	return cmd
}

// printSwitched prints what a tool switch did (msg) and, when the node
// reconnected for it, that the server now sees it.
func printSwitched(w io.Writer, msg string, r controlapi.ReloadReport) error {
	if r.Reconnected {
		msg += "; the node reconnected so the server sees it"
	}
	_, err := fmt.Fprintln(w, msg)
	return err
}

func printTools(w io.Writer, tools []controlapi.ToolStatus, all bool) error {
	var rows []string
	left := 0
	for _, t := range tools {
		if !t.Exposed && !all {
			left++
			continue
		}
		rows = append(rows, toolRow(t, all))
	}
	if len(rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		header := "NAME\tEXPOSED\tTIMEOUT\tMAX\tAPPROVAL\tSOURCE"
		if all {
			header += "\tWHY"
		}
		fmt.Fprintln(tw, header)
		for _, r := range rows {
			fmt.Fprintln(tw, r)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := printAliases(w, tools, all); err != nil {
			return err
		}
		if err := printServerNames(w, tools, all); err != nil {
			return err
		}
		if all {
			if err := printSandboxes(w, tools); err != nil {
				return err
			}
		}
	}
	var err error
	switch {
	case len(tools) == 0:
		_, err = fmt.Fprintln(w, "no tools are registered")
	case len(rows) == 0:
		_, err = fmt.Fprintf(w, "none of the %d tools is exposed; vcpnode tools --all says why\n", left)
	case left > 0:
		_, err = fmt.Fprintf(w, "%d more not exposed; vcpnode tools --all lists them and why\n", left)
	}
	return err
}

// printAliases names the other names the listed tools answer to, one
// line, when any has some.
func printAliases(w io.Writer, tools []controlapi.ToolStatus, all bool) error {
	var names []string
	for _, t := range tools {
		if t.Exposed || all {
			for _, a := range t.Aliases {
				names = append(names, a+" → "+t.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "also called as: %s\n", strings.Join(names, ", "))
	return err
}

// printServerNames says, one line, the name the server knows each listed
// tool by when [node] tool_names or [tools.NAME] name renames it.
func printServerNames(w io.Writer, tools []controlapi.ToolStatus, all bool) error {
	names := map[string]string{}
	for _, t := range tools {
		if (t.Exposed || all) && t.ServerName != "" {
			names[t.Name] = t.ServerName
		}
	}
	if len(names) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "on the server: %s\n", serverNamesText(names))
	return err
}

// serverNamesText writes renamed tools as "Echo as Echo_gpu-a, …", by name.
func serverNamesText(names map[string]string) string {
	var out []string
	for _, local := range slices.Sorted(maps.Keys(names)) {
		out = append(out, local+" as "+names[local])
	}
	return strings.Join(out, ", ")
}

// printSandboxes lists, under --all, the profile each tool's processes
// run under and what they got beyond it from what they run (derived
// grants, known once a tool has started a process).
func printSandboxes(w io.Writer, tools []controlapi.ToolStatus) error {
	var lines []string
	for _, t := range tools {
		if t.Sandbox == "" || t.Skipped != "" {
			continue
		}
		line := "  " + t.Name + ": " + t.Sandbox
		var grants []string
		for _, g := range t.SandboxGrants {
			how := "reads "
			if g.Write {
				how = "writes "
			}
			grants = append(grants, how+g.Path+" ("+g.From+")")
		}
		if len(grants) > 0 {
			line += "; also " + strings.Join(grants, ", ")
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "sandbox profiles:\n%s\n", strings.Join(lines, "\n"))
	return err
}

// toolRow is one tab-separated line of the tools table.
func toolRow(t controlapi.ToolStatus, withReason bool) string {
	if t.Skipped != "" {
		// A plugin folder that runs as no tool: only its kind and why matter.
		row := fmt.Sprintf("%s\t%s\t-\t-\t-\t%s", t.Name, t.Skipped, t.Source)
		if withReason {
			row += "\t" + t.Reason
		}
		return row
	}
	exposed := "no"
	switch {
	case t.Exposed && t.Implicit:
		exposed = "by name" // never registered; the server calls it by its fixed name
	case t.Exposed:
		exposed = "yes"
	}
	limit := "-"
	if t.MaxConcurrent > 0 {
		limit = strconv.Itoa(t.MaxConcurrent)
	}
	approval := t.Approval
	if t.ApprovalTimeoutMs > 0 {
		approval += " (" + ctlAge(time.Duration(t.ApprovalTimeoutMs)*time.Millisecond) + ")"
	}
	source := t.Source
	if source == "" {
		source = "-"
	}
	if t.State != "" {
		source += " (" + t.State + ")" // an MCP server's state
	}
	timeout := ctlAge(time.Duration(t.TimeoutMs) * time.Millisecond)
	if t.Override != nil && t.Override.Timeout != 0 {
		timeout += " (set)" // by the console or `vcpnode tools timeout`
	}
	row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", t.Name, exposed, timeout, limit, approval, source)
	if withReason {
		row += "\t" + t.Reason
	}
	return row
}
