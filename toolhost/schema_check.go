package toolhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// ErrBadArgs is behind every ArgsError: a typed tool was called with
// arguments that do not fit its schema.
var ErrBadArgs = errors.New("invalid arguments")

// CommandArg is the argument that selects one of a multi-command tool's commands.
const CommandArg = "command"

// injectedArgs are keys the VCP server (or its parser) adds to a call's
// arguments on its own (protocol.md §2.3.1). They are never an error and are
// passed to Invoke untouched; a tool that forwards its arguments elsewhere
// drops them with IsInjectedArg.
var injectedArgs = []string{
	"maid",             // the agent's name, kept by the server
	"valet",            // copied to maid by the parser, and kept
	"river_context",    // the conversation, injected with river:…
	"vref_files",       // file:// URLs on the main server, injected with vref:…
	"__vcp_timed_call", // a scheduled call's trigger record
	"tool_password",    // sent by the model when the server's VCPToolCode is off
	"timely_contact",   // the scheduler's own argument
}

// IsInjectedArg reports whether key is one the server adds to calls itself
// (maid, river_context, vref_files, __vcp_timed_call…), or any key starting
// with "__", which the server reserves for such records.
func IsInjectedArg(key string) bool {
	return slices.Contains(injectedArgs, key) || strings.HasPrefix(key, "__")
}

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

// CheckArgs checks and coerces the arguments of a call of the tool s. For an
// untyped tool, or an untyped command of it, args is returned as it is.
// Otherwise it returns a new map in which:
//   - strings, as VCP sends every value, are coerced to the parameter's type:
//     "10" → 10, "true" → true, JSON text → array or object; a number or
//     boolean given for a string parameter becomes its text;
//   - an absent argument (or null, or an empty string for a non-string
//     parameter) takes the parameter's default when it has one;
//   - aliases are mapped back to the parameter's Name (except for a
//     parameter named "command" of a tool with named commands, which stays
//     under its alias since "command" carries the selection);
//   - keys the server injects (IsInjectedArg) are passed on untouched, and
//     so is "command" for a tool that has named commands.
//
// A missing required argument, a value of the wrong type, one outside the
// enum, an unknown argument, or an unknown command makes an *ArgsError
// naming each problem.
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
	out, problems := checkParams(cmd.Schema.Params, args, multiCommand(s) || namesCommand(s, cmd, args))
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
	want, _ := jsonString(args[CommandArg])
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
	raw, ok := args[CommandArg]
	if !ok || slices.ContainsFunc(c.Schema.Params, func(p Param) bool { return p.Name == CommandArg || p.WireName() == CommandArg }) {
		return false
	}
	v, isString := jsonString(raw)
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
	raw, ok := args[CommandArg]
	if !ok || isNullOrBlank(raw) {
		if i := slices.IndexFunc(s.Commands, func(c Command) bool { return c.Command == "" }); i >= 0 {
			return s.Commands[i], ""
		}
		return Command{}, fmt.Sprintf("missing required argument %q: one of %s", CommandArg, quoteList(names))
	}
	want, isString := jsonString(raw)
	if !isString {
		return Command{}, fmt.Sprintf("argument %q must be a command name, one of %s, not %s", CommandArg, quoteList(names), clip(string(raw)))
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

// checkParams coerces args against params; see CheckArgs.
func checkParams(params []Param, args map[string]json.RawMessage, named bool) (map[string]json.RawMessage, []string) {
	out := make(map[string]json.RawMessage, len(args)+len(params))
	var problems []string
	used := make(map[string]bool, len(args))
	for _, p := range params {
		// A parameter named "command" of a tool whose commands are told
		// apart by "command" stays under its alias: the selection keeps
		// that key, and the tool maps the alias back itself.
		name := p.Name
		if named && p.Name == CommandArg {
			name = p.WireName()
		}
		key, raw, present := lookupParam(p, args)
		if name != p.Name {
			// "command" is the selection here, never this parameter.
			raw, present = args[name]
			key = name
		}
		if present && p.Alias != "" && p.Alias != p.Name && name == p.Name {
			if _, both := args[p.Name]; both {
				if _, alias := args[p.Alias]; alias {
					problems = append(problems, fmt.Sprintf("argument %q is given twice, as %q and as %q", p.Name, p.Name, p.Alias))
					used[p.Name], used[p.Alias] = true, true
					continue
				}
			}
		}
		if present {
			used[key] = true
		}
		if present && (isNull(raw) || (p.Type != TypeString && p.Type != "" && isBlankString(raw))) {
			present = false
		}
		if !present {
			switch {
			case p.Default != nil:
				out[name] = p.Default
			case p.Required:
				problems = append(problems, fmt.Sprintf("missing required argument %q (%s)", p.WireName(), typeText(p.Type)))
			}
			continue
		}
		v, problem := coerce(p, raw)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("argument %q: %s", p.WireName(), problem))
			continue
		}
		if len(p.Enum) > 0 && !inEnum(v, p.Enum) {
			problems = append(problems, fmt.Sprintf("argument %q: %s is not one of %s", p.WireName(), clip(string(v)), enumText(p.Enum)))
			continue
		}
		out[name] = v
	}
	var unknown []string
	for k, v := range args {
		switch {
		case used[k]:
		case IsInjectedArg(k), named && k == CommandArg:
			out[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		problems = append(problems, fmt.Sprintf("unknown argument %q: the parameters are %s", k, paramList(params)))
	}
	return out, problems
}

// lookupParam finds p's argument under its wire name or its own name (the
// XML and JSON call formats can carry names VCP cannot).
func lookupParam(p Param, args map[string]json.RawMessage) (string, json.RawMessage, bool) {
	if raw, ok := args[p.WireName()]; ok {
		return p.WireName(), raw, true
	}
	if raw, ok := args[p.Name]; ok {
		return p.Name, raw, true
	}
	return "", nil, false
}

// coerce returns raw as a value of p's type, or a problem.
func coerce(p Param, raw json.RawMessage) (json.RawMessage, string) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if !json.Valid(raw) {
		return nil, "is not valid JSON"
	}
	s, isString := jsonString(raw)
	switch p.Type {
	case "":
		return raw, ""
	case TypeString:
		if isString {
			return raw, ""
		}
		if raw[0] == '{' || raw[0] == '[' {
			return nil, "must be a string, not " + JSONKind(raw)
		}
		return mustMarshal(string(raw)), "" // a number or boolean, as its text
	case TypeBoolean:
		text := string(raw)
		if isString {
			text = strings.ToLower(strings.TrimSpace(s))
		}
		if text == "true" || text == "false" {
			return json.RawMessage(text), ""
		}
		return nil, fmt.Sprintf("%s is not a boolean (true or false)", clip(string(raw)))
	case TypeInteger, TypeNumber:
		text := string(raw)
		if isString {
			text = strings.TrimSpace(s)
		}
		n, ok := jsonNumber(text)
		if !ok {
			return nil, fmt.Sprintf("%s is not %s", clip(string(raw)), article(p.Type))
		}
		if p.Type == TypeNumber {
			return n, ""
		}
		i, ok := integral(n)
		if !ok {
			return nil, fmt.Sprintf("%s is not an integer", clip(string(raw)))
		}
		return i, ""
	case TypeArray, TypeObject:
		v := raw
		if isString {
			v = json.RawMessage(strings.TrimSpace(s))
			if !json.Valid(v) {
				return nil, fmt.Sprintf("%s is not %s (write it as JSON, e.g. %s)", clip(string(raw)), article(p.Type), emptyOf(p.Type))
			}
		}
		if kind := JSONKind(v); kind != article(p.Type) {
			return nil, fmt.Sprintf("must be %s, not %s", article(p.Type), kind)
		}
		return v, ""
	}
	return raw, "" // an unknown type checks nothing (FromJSONSchema refuses them)
}

// jsonNumber reports whether text is a JSON number and returns it as one.
func jsonNumber(text string) (json.RawMessage, bool) {
	if text == "" || (text[0] != '-' && (text[0] < '0' || text[0] > '9')) {
		return nil, false
	}
	var n json.Number
	if err := json.Unmarshal([]byte(text), &n); err != nil {
		return nil, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	return json.RawMessage(text), true
}

// integral returns n as an integer when it has no fractional part: "10",
// "10.0" and "1e3" are integers, "2.5" is not. Plain digit runs are kept
// as they are, however long.
func integral(n json.RawMessage) (json.RawMessage, bool) {
	text := string(n)
	if !strings.ContainsAny(text, ".eE") {
		return n, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, false
	}
	return json.RawMessage(strconv.FormatFloat(f, 'f', 0, 64)), true
}

// inEnum compares v with each allowed value as JSON values, not as text.
func inEnum(v json.RawMessage, enum []json.RawMessage) bool {
	var got any
	if err := json.Unmarshal(v, &got); err != nil {
		return false
	}
	for _, e := range enum {
		var want any
		if json.Unmarshal(e, &want) == nil && jsonEqual(got, want) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func jsonString(raw json.RawMessage) (string, bool) {
	raw = json.RawMessage(bytes.TrimSpace(raw))
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isBlankString(raw json.RawMessage) bool {
	s, ok := jsonString(raw)
	return ok && strings.TrimSpace(s) == ""
}

func isNullOrBlank(raw json.RawMessage) bool { return isNull(raw) || isBlankString(raw) }

func article(t ParamType) string {
	switch t {
	case TypeInteger, TypeArray, TypeObject:
		return "an " + string(t)
	}
	return "a " + string(t)
}

func emptyOf(t ParamType) string {
	if t == TypeArray {
		return `["a", "b"]`
	}
	return `{"key": "value"}`
}

func typeText(t ParamType) string {
	if t == "" {
		return "any type"
	}
	return string(t)
}

func enumText(enum []json.RawMessage) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = string(e)
	}
	return strings.Join(parts, ", ")
}

func paramList(params []Param) string {
	if len(params) == 0 {
		return "none"
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.WireName()
	}
	return strings.Join(names, ", ")
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// clip shortens a value quoted in an error text.
func clip(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	return truncateUTF8(s, most) + "…"
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only called with strings
	}
	return b
}
