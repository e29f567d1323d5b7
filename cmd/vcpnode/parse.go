package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// errNoCalls: a reply held no tool call that parses.
var errNoCalls = errors.New("no tool call found")

// maxReplyBytes bounds a reply read by parse and call --text.
const maxReplyBytes = 64 << 20

// formatsFlag is --formats of parse and call --text: the call formats
// read, by the names parse prints.
type formatsFlag struct{ names []string }

func (f *formatsFlag) add(cmd *cobra.Command, prefix string) {
	names := make([]string, len(textproto.Formats))
	for i, n := range textproto.Formats {
		names[i] = string(n)
	}
	cmd.Flags().StringSliceVar(&f.names, "formats", nil, prefix+"read only these call `FORMATS` (comma-separated: "+strings.Join(names, ", ")+"); default all")
}

// options are the parse options the flags ask for.
func (f *formatsFlag) options(fuzzy bool) (textproto.Options, error) {
	formats, err := textproto.ParseFormats(f.names)
	if err != nil {
		return textproto.Options{}, usageErrorf("--formats: %v", err)
	}
	return textproto.Options{Fuzzy: fuzzy, Formats: formats}, nil
}

func newParseCmd(a *app) *cobra.Command {
	var asJSON, fuzzy bool
	var formats formatsFlag
	cmd := &cobra.Command{
		Use:   "parse [FILE|-]",
		Short: "Find the tool calls in a model's reply, as the VCP server would (no daemon needed)",
		Long: "parse reads a model's reply from FILE (or standard input) and prints every tool call\n" +
			"in it, in every format the node reads: VCP <<<[TOOL_REQUEST]>>> blocks exactly as the\n" +
			"VCP server parses them (vcp), <function_calls><invoke> XML (xml),\n" +
			"<tool_code> and <function_call> tags around {\"name\", \"arguments\"} JSON (tool_code,\n" +
			"function_call), {\"tool_name\", \"parameters\"} JSON (json) and {\"tool_calls\": [...]}\n" +
			"objects (tool_calls). JSON with single quotes, trailing commas, unquoted keys or\n" +
			"comments is mended and the call marked repaired. Each call shows its line, format,\n" +
			"tool and arguments. Blocks that look like calls but are not (no end marker, inside a\n" +
			"<think> block, no tool_name, JSON beyond repair…) are reported on standard error\n" +
			"with their line and the reason. --fuzzy parses with the server's fuzzy marker\n" +
			"matching switched on (off by default there too). --formats vcp,xml reads only the\n" +
			"formats named. A call inside a Markdown code fence is shown as an example (\"example\":\n" +
			"true with --json): 'vcpnode call --text' does not run it. --json prints an array with\n" +
			"one object per call. It exits 1 when no call parses.",
		Example: "  vcpnode parse reply.txt\n" +
			"  pbpaste | vcpnode parse --json --fuzzy",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("%q takes one FILE (or - for standard input), not %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "-"
			if len(args) == 1 {
				name = args[0]
			}
			opt, err := formats.options(fuzzy)
			if err != nil {
				return err
			}
			reply, err := a.readReply(cmd, name)
			if err != nil {
				return err
			}
			res := textproto.Parse(reply, opt)
			printRejected(a.stderr, res.Rejected)
			if asJSON {
				if err := writeJSON(a.stdout, res.Calls); err != nil {
					return err
				}
			} else if err := printCalls(a.stdout, res.Calls); err != nil {
				return err
			}
			if len(res.Calls) == 0 {
				return noCallsError(res)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calls as a JSON array")
	cmd.Flags().BoolVar(&fuzzy, "fuzzy", false, "match markers as the server does with fuzzy matching on")
	formats.add(cmd, "")
	return cmd
}

// readReply reads FILE, or standard input for "-".
func (a *app) readReply(cmd *cobra.Command, name string) (string, error) {
	var r io.Reader
	if name == "-" {
		r = cmd.InOrStdin()
	} else {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxReplyBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the reply: %w", err)
	}
	if len(b) > maxReplyBytes {
		return "", fmt.Errorf("the reply is larger than %d MiB", maxReplyBytes>>20)
	}
	return string(b), nil
}

func noCallsError(res textproto.Result) error {
	if n := len(res.Rejected); n > 0 {
		return fmt.Errorf("%w (%d block(s) rejected, see above)", errNoCalls, n)
	}
	return fmt.Errorf("%w in the reply", errNoCalls)
}

// printRejected writes one line per rejected block.
func printRejected(w io.Writer, rejected []textproto.Rejected) {
	for _, r := range rejected {
		fmt.Fprintf(w, "line %d: %s block rejected: %s\n", r.Line, r.Format, r.Reason)
	}
}

// printCalls writes each call: a header line, then its arguments one per
// line (string values as they are, others as JSON), then its notes.
func printCalls(w io.Writer, calls []textproto.Call) error {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "line %d: %s call of %s", c.Line, c.Format, c.Tool)
		var flags []string
		if c.ID != "" {
			flags = append(flags, "id="+c.ID)
		}
		if c.Repaired {
			flags = append(flags, "repaired JSON")
		}
		if c.Example {
			flags = append(flags, "example: inside a code fence")
		}
		if c.Archery {
			flags = append(flags, "archery")
		}
		if c.ArcheryNoReply {
			flags = append(flags, "no_reply")
		}
		if c.MarkHistory {
			flags = append(flags, "mark_history")
		}
		if c.River != nil {
			flags = append(flags, "river="+*c.River)
		}
		if c.Vref != nil {
			flags = append(flags, "vref="+*c.Vref)
		}
		if len(flags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(flags, ", "))
		}
		b.WriteByte('\n')
		for _, k := range sortedKeys(c.Args) {
			fmt.Fprintf(&b, "  %s: %s\n", k, indentValue(argValue(c.Args[k])))
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// argValue shows a JSON string as its text and anything else as JSON.
func argValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// indentValue keeps a multi-line value under its key.
func indentValue(s string) string {
	return strings.ReplaceAll(s, "\n", "\n    ")
}
