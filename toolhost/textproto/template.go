package textproto

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// CallTemplate is a TOOL_REQUEST block calling command c of s, ready to be
// edited and run (the console's "load into the executor"): for a typed
// command every parameter, required ones first, with its example value
// (schema.Param.Example); for a plugin's command the arguments of the
// first call its invocation example shows, with the example's values, or,
// for a command with no example, of the call of this tool (and command)
// its description shows: many VCP plugins write their call form there.
func CallTemplate(s toolhost.Spec, c toolhost.Command) string {
	fields := [][2]string{{"tool_name", s.Name}}
	multi := len(s.Commands) > 1 && c.Command != ""
	if c.Schema != nil {
		if multi {
			fields = append(fields, [2]string{schema.CommandArg, c.Command})
		}
		params := slices.Clone(c.Schema.Params)
		slices.SortStableFunc(params, func(a, b schema.Param) int {
			switch {
			case a.Required == b.Required:
				return 0
			case a.Required:
				return -1
			}
			return 1
		})
		for _, p := range params {
			fields = append(fields, [2]string{p.WireName(), p.Example()})
		}
		return vcpBlock(blockStart, blockEnd, fields)
	}
	var args map[string]json.RawMessage
	var names []string
	if call, ok := templateExample(s, c, multi); ok {
		args, names = call.Args, sortedArgNames(call)
	}
	// The command first, as plugins' own examples write it.
	if _, ok := args[schema.CommandArg]; ok || c.Command != "" && (multi || len(args) == 0) {
		cmd := c.Command
		if v, ok := args[schema.CommandArg]; ok && !multi {
			cmd = argText(v)
		}
		if cmd != "" {
			fields = append(fields, [2]string{schema.CommandArg, cmd})
		}
	}
	for _, k := range names {
		if k != schema.CommandArg {
			fields = append(fields, [2]string{k, argText(args[k])})
		}
	}
	return vcpBlock(blockStart, blockEnd, fields)
}

// argText is a parsed VCP value as it was written: VCP values are strings.
func argText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// templateExample is the call CallTemplate takes c's arguments from: the
// first its example shows, else the first of s (of c, when s has several
// commands) its description shows.
func templateExample(s toolhost.Spec, c toolhost.Command, multi bool) (Call, bool) {
	if calls := exampleCalls(c.Example); len(calls) > 0 {
		return calls[0], true
	}
	if !strings.Contains(c.Description, blockStart) {
		return Call{}, false
	}
	for _, call := range Parse(c.Description, Options{Formats: []Format{FormatVCP}}).Calls {
		cmd, named := call.Args[schema.CommandArg]
		if call.Tool == s.Name && (!multi || !named || argText(cmd) == c.Command) {
			return call, true
		}
	}
	return Call{}, false
}
