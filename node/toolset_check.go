package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// knownNames is every tool name a config may refer to: the set's tools,
// the pending ones, and plugins that register nothing (static, disabled,
// unsupported, a direct plugin that answers no calls).
func knownNames(ts ToolSet, sources []toolsource.Prepared) []string {
	var names []string
	for _, t := range ts.All() {
		names = append(names, t.Spec().Name)
	}
	for _, p := range sources {
		if sf, ok := p.(scannedFolders); ok {
			names = append(names, sf.Unregistered()...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ConfigProblems judges cfg against the tools of the set, the same for
// `run`, every reload and `config check`: a problem refuses the config,
// a warning is printed (reload, config check) or logged (run).
//
// The problems: an "ask" tool whose approval wait is not below its own
// timeout (a plugin manifest's), which only the folders tell; a timeout
// the config sets is judged by config's own checks. The warnings: tool
// names in [tools.NAME], exposed_tools and hidden_tools that match no
// tool, with the closest name when there is one.
func (ts ToolSet) ConfigProblems(cfg config.Config) (problems, warnings []string) {
	own := map[string]time.Duration{}
	for _, t := range ts.All() {
		if s := t.Spec(); s.Timeout > 0 {
			own[s.Name] = s.Timeout
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		t := cfg.Tools[name]
		if d, known := own[name]; known && t.Timeout == 0 {
			if at, msg := t.ApprovalWindowProblem(name, d); msg != "" {
				problems = append(problems, at+": "+msg)
			}
		} else if at, msg := t.ApprovalWindowCut(name, toolhost.DefaultTimeout); !known && slices.Contains(ts.Known, name) && msg != "" {
			warnings = append(warnings, at+": "+msg)
		}
		// A vcp_ table sets one of the server's own tools, which only the
		// server's list (known once connected) can confirm.
		if _, server := bridge.ServerName(name); !server && !slices.Contains(ts.Known, name) {
			warnings = append(warnings, fmt.Sprintf("[tools.%s] names no tool this node hosts%s", name, ts.hint(name)))
		}
	}
	for _, name := range cfg.Node.ExposedTools {
		if !slices.Contains(ts.Known, name) {
			warnings = append(warnings, fmt.Sprintf("node.exposed_tools: %q names no tool this node hosts%s; a non-empty exposed_tools hides every tool it does not name", name, ts.hint(name)))
		}
	}
	for _, name := range cfg.Node.HiddenTools {
		if !slices.Contains(ts.Known, name) {
			warnings = append(warnings, fmt.Sprintf("node.hidden_tools: %q names no tool this node hosts%s", name, ts.hint(name)))
		}
	}
	return problems, warnings
}

// hint is " (did you mean X?)" for a name close to a known one, else the
// known names.
func (ts ToolSet) hint(name string) string {
	if c := humantext.Closest(name, ts.Known); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return " (known: " + strings.Join(ts.Known, ", ") + ")"
}

// Commands are the command names of each tool of the set whose commands
// are known without starting anything (plugins, built-ins).
func (ts ToolSet) Commands() map[string][]string {
	out := map[string][]string{}
	for _, t := range ts.Tools {
		spec := t.Spec()
		var names []string
		for _, c := range spec.Commands {
			if c.Command != "" {
				names = append(names, c.Command)
			}
		}
		out[spec.Name] = names
	}
	return out
}

// CommandWarnings are the [tools.X.commands.Y] tables that never apply to
// a tool whose commands the set knows, for run and reload; config check
// places the same warnings at their lines, and asks the running daemon
// for the commands of MCP servers and direct plugins.
func (ts ToolSet) CommandWarnings(cfg config.Config) []string {
	var ws []string
	known := ts.Commands()
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		cmds, ok := known[name]
		if !ok {
			continue
		}
		for _, cmd := range slices.Sorted(maps.Keys(cfg.Tools[name].Commands)) {
			if msg := CommandProblem(name, cmd, cmds); msg != "" {
				ws = append(ws, "tools."+name+".commands."+cmd+": "+msg)
			}
		}
	}
	return ws
}

// CommandProblem says why a commands table for cmd never applies to the
// tool name with the commands cmds (the gate matches the command a call
// selects exactly, and a call of a single-command tool selects none); ""
// when it applies.
func CommandProblem(name, cmd string, cmds []string) string {
	switch {
	case len(cmds) < 2:
		return fmt.Sprintf("%s has a single command, which every call runs: set [tools.%s] approval instead", name, name)
	case slices.Contains(cmds, cmd):
		return ""
	}
	msg := fmt.Sprintf("%s has no command %q (its commands: %s)", name, cmd, strings.Join(cmds, ", "))
	if i := slices.IndexFunc(cmds, func(c string) bool { return strings.EqualFold(c, cmd) }); i >= 0 {
		msg += fmt.Sprintf("; did you mean %q? command names match exactly", cmds[i])
	}
	return msg
}
