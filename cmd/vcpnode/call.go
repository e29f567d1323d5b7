package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// errToolFailed: the tool ran and answered with an error.
var errToolFailed = errors.New("tool failed")

func newCallCmd(a *app) *cobra.Command {
	var f controlFlags
	var argsJSON, textFile string
	var text textCallOptions
	cmd := &cobra.Command{
		Use:   "call TOOL [key=value | key:=JSON]... | call --text FILE|-",
		Short: "Run a tool in the daemon as the server would, and print its result",
		Long: "call runs TOOL in the running daemon through the same pipeline as a call from the\n" +
			"server (limits, timeout, result shaping) and prints, as JSON, the result the server\n" +
			"would receive. It is the owner's call: the exposure policy and approval do not\n" +
			"apply, so a hidden tool or a plugin the server cannot see yet can be tried.\n\n" +
			"Arguments: key=value sends value as a string (as the server does); key:=JSON sends\n" +
			"a JSON value (number, object…); --args '{…}' gives them all at once, and the pairs\n" +
			"override it. --json prints the whole answer (outcome, request id, duration, error)\n" +
			"as JSON instead of the result alone. It exits 1 when the tool answers with an error.\n\n" +
			"--text FILE (or - for standard input) takes the calls from a model's reply instead:\n" +
			"every call 'vcpnode parse' finds in it (VCP blocks, XML or JSON calls) is run in turn\n" +
			"this way and its result printed; rejected blocks are reported on standard error, and\n" +
			"calls inside Markdown code fences are examples, not run unless --fenced is given.\n" +
			"--formats vcp,xml reads only the call formats named ('vcpnode parse' prints them). It\n" +
			"exits 1 when no call parses or any call fails. --parallel runs them all at once (the\n" +
			"daemon's limits still apply); results are printed in the order of the calls either\n" +
			"way. --results prints them as the model reads them back: vcp (<<<[TOOL_RESULT]>>>\n" +
			"blocks), xml (a tool_result event), openai (role \"tool\" messages), anthropic (a user\n" +
			"message of tool_result blocks), gemini (functionResponse parts), tool_call_result\n" +
			"({\"tool_call_result\"} user message text) or json (as --json). Each result names its\n" +
			"call's id: the one the call carried (a VCP block's request_id, a tool_calls id…) or\n" +
			"one generated for it.",
		Example: "  # with examples/Plugin in [plugins] dirs:\n" +
			"  vcpnode call UnitConverter command=Convert value:=10 from=km to=mi\n" +
			"  vcpnode call UnitConverter --args '{\"command\": \"ListUnits\"}' --json\n" +
			"  vcpnode call --text reply.txt\n" +
			"  vcpnode call --text reply.txt --parallel --results vcp",
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("text") {
				if len(args) > 0 || cmd.Flags().Changed("args") {
					return usageErrorf("--text takes the calls from a reply: give no TOOL, pairs or --args with it")
				}
				if cmd.Flags().Changed("results") && !slices.Contains(textproto.ResultFormats, text.results) {
					return usageErrorf("--results %q is not one of %s", text.results, strings.Join(textproto.ResultFormats, ", "))
				}
				if f.json && text.results != "" && text.results != textproto.ResultsJSON {
					return usageErrorf("--json prints JSON results; give --results or --json, not both")
				}
				return nil
			}
			for _, flag := range []string{"fuzzy", "parallel", "results", "fenced", "formats"} {
				if cmd.Flags().Changed(flag) {
					return usageErrorf("--%s applies to --text only", flag)
				}
			}
			if len(args) == 0 {
				return usageErrorf("%q needs the name of a tool (vcpnode tools --all lists them)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("text") {
				return a.runTextCalls(cmd, &f, textFile, text)
			}
			toolArgs, err := parseCallArgs(argsJSON, args[1:])
			if err != nil {
				return err
			}
			// No timeout of our own: the tool's deadline bounds the call,
			// and Ctrl-C cancels it in the daemon.
			c, ctx, done, err := a.controlClient(cmd.Context(), &f, 0)
			if err != nil {
				return err
			}
			defer done()
			return a.runCall(ctx, c, args[0], toolArgs, f.json)
		},
	}
	f.add(cmd, true)
	cmd.Flags().StringVar(&argsJSON, "args", "", "the arguments as one `JSON` object; key=value pairs override it")
	cmd.Flags().StringVar(&textFile, "text", "", "run the calls found in a model's reply read from `FILE` (- for standard input)")
	cmd.Flags().BoolVar(&text.fuzzy, "fuzzy", false, "with --text: match markers as the server does with fuzzy matching on")
	cmd.Flags().BoolVar(&text.parallel, "parallel", false, "with --text: run the calls at once, not one after another")
	cmd.Flags().BoolVar(&text.fenced, "fenced", false, "with --text: run the calls inside Markdown code fences too (examples, by default not run)")
	text.formats.add(cmd, "with --text: ")
	cmd.Flags().StringVar(&text.results, "results", "", "with --text: print the results as the model reads them back, `FORMAT` "+strings.Join(textproto.ResultFormats, ", "))
	cmd.ValidArgsFunction = a.ctlCompletion(&f, toolNames)
	return cmd
}

// toolNames are the daemon's tools for completion, each with why it is
// exposed or not.
func toolNames(ctx context.Context, c *controlapi.ControlClient) ([]string, error) {
	tools, err := c.Tools(ctx)
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name+"\t"+ctlClip(t.Reason, 60))
	}
	return names, err
}

func (a *app) runCall(ctx context.Context, c *controlapi.ControlClient, tool string, args map[string]json.RawMessage, asJSON bool) error {
	res, err := c.Call(ctx, controlapi.CallRequest{Tool: tool, Args: args})
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(a.stdout, res); err != nil {
			return err
		}
	}
	took := time.Duration(res.DurationMs) * time.Millisecond
	if !res.OK {
		return fmt.Errorf("%w: %s (%s, request %s, after %s): %s", errToolFailed, res.Tool, res.Outcome, res.RequestID, ctlAge(took), res.Error)
	}
	if asJSON {
		return nil
	}
	if server, ok := strings.CutPrefix(res.Tool, bridgePrefix); ok {
		fmt.Fprintf(a.stderr, "call of the server's %s through its bridge (request %s): ok after %s; its result:\n", server, res.RequestID, ctlAge(took))
	} else {
		fmt.Fprintf(a.stderr, "local call of %s (request %s): ok after %s; the server would receive this result:\n", res.Tool, res.RequestID, ctlAge(took))
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, res.Result, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(res.Result)
	}
	pretty.WriteByte('\n')
	_, err = a.stdout.Write(pretty.Bytes())
	return err
}

// parseCallArgs merges --args and key=value / key:=JSON pairs.
func parseCallArgs(argsJSON string, pairs []string) (map[string]json.RawMessage, error) {
	var args map[string]json.RawMessage
	if strings.TrimSpace(argsJSON) != "" {
		dec := json.NewDecoder(strings.NewReader(argsJSON))
		if err := dec.Decode(&args); err != nil {
			return nil, usageErrorf("--args must be one JSON object of arguments, like '{\"message\": \"hi\"}': %v", err)
		}
		if dec.More() {
			return nil, usageErrorf("--args must be one JSON object of arguments; there is more after it")
		}
	}
	if args == nil { // no --json, or --json null
		args = map[string]json.RawMessage{}
	}
	for _, p := range pairs {
		key, value, ok := strings.Cut(p, "=")
		raw := strings.HasSuffix(key, ":")
		key = strings.TrimSuffix(key, ":")
		if strings.HasPrefix(strings.TrimSpace(p), "{") {
			return nil, usageErrorf("argument %q looks like a JSON object: pass it with --args (--json only chooses JSON output)", p)
		}
		if !ok || key == "" {
			return nil, usageErrorf("argument %q is not key=value (a string) or key:=JSON", p)
		}
		if raw {
			if !json.Valid([]byte(value)) {
				return nil, usageErrorf("argument %s:=%s is not valid JSON; use %s=%s to send it as a string", key, value, key, value)
			}
			args[key] = json.RawMessage(value)
			continue
		}
		b, err := json.Marshal(value)
		if err != nil {
			return nil, usageErrorf("argument %q: %v", p, err)
		}
		args[key] = b
	}
	return args, nil
}
