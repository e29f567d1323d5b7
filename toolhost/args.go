package toolhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// ErrBadArgs is behind every ArgsError: a typed tool was called with
// arguments that do not fit its schema.
var ErrBadArgs = errors.New("invalid arguments")

// ArgsError is the answer to a typed tool called with wrong arguments. Its
// text names every problem and ends with how to call the tool, so the model
// can retry in one step.
type ArgsError struct {
	Tool string
	// Command is the selected command; empty when none could be selected.
	Command string
	// Problems, one sentence each, in parameter order.
	Problems []string
	// Usage is the correct invocation text (descriptions and examples).
	Usage string
}

func (e *ArgsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s", e.Tool)
	if e.Command != "" {
		fmt.Fprintf(&b, " (command %s)", e.Command)
	}
	b.WriteString(":\n")
	for _, p := range e.Problems {
		b.WriteString("- ")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if e.Usage != "" {
		b.WriteString("Call it like this:\n")
		b.WriteString(e.Usage)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Unwrap lets errors.Is(err, ErrBadArgs) hold.
func (e *ArgsError) Unwrap() error { return ErrBadArgs }

// Typed reports whether any of s's commands carries a Schema.
func (s Spec) Typed() bool {
	return slices.ContainsFunc(s.Commands, func(c Command) bool { return c.Schema != nil })
}

// requestIDArg is a VCP block's request id (as AIO Hub reads it), which the
// server's parser passes on as an argument: the call's id, not the tool's
// business.
const requestIDArg = "request_id"

// withoutRequestID is args without request_id, unless a command of s
// declares a parameter of that name. args itself is left as it is.
func withoutRequestID(s Spec, args map[string]json.RawMessage) map[string]json.RawMessage {
	if _, ok := args[requestIDArg]; !ok {
		return args
	}
	for _, c := range s.Commands {
		if c.Schema != nil && slices.ContainsFunc(c.Schema.Params, func(p schema.Param) bool { return p.Name == requestIDArg || p.WireName() == requestIDArg }) {
			return args
		}
	}
	out := make(map[string]json.RawMessage, len(args)-1)
	for k, v := range args {
		if k != requestIDArg {
			out[k] = v
		}
	}
	return out
}

// CheckArgs checks and coerces the arguments of a call of the tool s. For an
// untyped tool, or an untyped command of it, args is returned as it is.
// Otherwise it selects the command the call addresses and checks the
// arguments against that command's schema (schema.Schema.Check; "command"
// is passed on for a tool that has several commands). An unknown command,
// or any problem with the arguments, makes an *ArgsError naming each
// problem.
func CheckArgs(s Spec, args map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if !s.Typed() {
		return args, nil
	}
	cmd, cmdProblem := selectCommand(s, args)
	if cmdProblem != "" {
		return nil, &ArgsError{Tool: s.Name, Problems: []string{cmdProblem}, Usage: commandUsage(s, args)}
	}
	if cmd.Schema == nil {
		return args, nil
	}
	out, problems := cmd.Schema.Check(args, multiCommand(s) || namesCommand(s, cmd, args))
	if len(problems) > 0 {
		return nil, &ArgsError{Tool: s.Name, Command: commandLabel(s, cmd), Problems: problems, Usage: Usage(s, cmd.Command)}
	}
	return out, nil
}

// maxUsageCommands is how many commands' invocation texts an error lists
// when no command could be selected; a tool with more (an MCP server with
// dozens of tools) shows only the command closest to what the model wrote.
const maxUsageCommands = 4

// commandUsage is the invocation text ending an error about the command
// itself: every command's, or for a tool with many, the closest one's.
func commandUsage(s Spec, args map[string]json.RawMessage) string {
	if len(s.Commands) <= maxUsageCommands {
		return Usage(s, "")
	}
	want, _ := schema.StringValue(args[schema.CommandArg])
	want = strings.ToLower(strings.TrimSpace(want))
	best, bestDist := "", -1
	for _, name := range commandNames(s) {
		if d := humantext.EditDistance(want, strings.ToLower(name)); bestDist < 0 || d < bestDist {
			best, bestDist = name, d
		}
	}
	return Usage(s, best)
}

// multiCommand reports whether s's commands are told apart by the
// "command" argument: it has several.
func multiCommand(s Spec) bool {
	return len(s.Commands) > 1
}

// namesCommand reports whether a one-command tool's call carries a
// "command" argument that just names that command (or the tool), as models
// used to multi-command plugins write; it is then passed on, not an error.
func namesCommand(s Spec, c Command, args map[string]json.RawMessage) bool {
	raw, ok := args[schema.CommandArg]
	if !ok || slices.ContainsFunc(c.Schema.Params, func(p schema.Param) bool { return p.Name == schema.CommandArg || p.WireName() == schema.CommandArg }) {
		return false
	}
	v, isString := schema.StringValue(raw)
	v = strings.TrimSpace(v)
	return isString && (strings.EqualFold(v, s.Name) || (c.Command != "" && strings.EqualFold(v, c.Command)))
}

// commandLabel is the command name shown in an error, empty for a tool with
// one command.
func commandLabel(s Spec, c Command) string {
	if multiCommand(s) {
		return c.Command
	}
	return ""
}

// selectCommand picks the command a call addresses. A tool with one command
// uses it for every call; otherwise the "command" argument selects it
// (exactly, else case-insensitively when that is unambiguous), and without
// one the command named "" is used if there is one.
func selectCommand(s Spec, args map[string]json.RawMessage) (Command, string) {
	if len(s.Commands) == 1 {
		return s.Commands[0], ""
	}
	names := commandNames(s)
	raw, ok := args[schema.CommandArg]
	if !ok || schema.Blank(raw) {
		if i := slices.IndexFunc(s.Commands, func(c Command) bool { return c.Command == "" }); i >= 0 {
			return s.Commands[i], ""
		}
		return Command{}, fmt.Sprintf("missing required argument %q: one of %s", schema.CommandArg, quoteList(names))
	}
	want, isString := schema.StringValue(raw)
	if !isString {
		return Command{}, fmt.Sprintf("argument %q must be a command name, one of %s, not %s", schema.CommandArg, quoteList(names), humantext.Clip(string(raw), 80))
	}
	want = strings.TrimSpace(want)
	if i := slices.IndexFunc(s.Commands, func(c Command) bool { return c.Command == want }); i >= 0 {
		return s.Commands[i], ""
	}
	var found []Command
	for _, c := range s.Commands {
		if strings.EqualFold(c.Command, want) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], ""
	}
	return Command{}, fmt.Sprintf("unknown command %q: the commands are %s", want, quoteList(names))
}

func commandNames(s Spec) []string {
	var names []string
	for _, c := range s.Commands {
		if c.Command != "" {
			names = append(names, c.Command)
		}
	}
	return names
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
