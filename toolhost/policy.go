package toolhost

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Policy decides which registered tools the server may see and call, and
// with which limits. It mirrors the config's exposed_tools, hidden_tools and
// [tools.NAME] tables. The zero Policy exposes every eligible tool.
type Policy struct {
	// ExposedTools, when non-empty, is the only plugins (and built-ins) exposed.
	ExposedTools []string
	// HiddenTools are never exposed, whatever else says so.
	HiddenTools []string
	// Tools holds per-tool overrides by tool name.
	Tools map[string]ToolOverride
	// Oversize is what a result above the result cap becomes:
	// OversizeTruncate ("" too) or OversizeError.
	Oversize string
	// RepeatLimit is how many calls of one tool with the same arguments
	// RepeatWindow allows; the next is answered with ErrRepeated. 0 turns
	// the loop guard off (repeat.go).
	RepeatLimit  int
	RepeatWindow time.Duration
}

// ToolOverride is one [tools.NAME] table.
type ToolOverride struct {
	// Expose, when set, forces the tool exposed or hidden (hidden_tools still wins).
	Expose *bool
	// Timeout replaces the tool's declared timeout when positive.
	Timeout time.Duration
	// MaxConcurrent caps this tool's simultaneous calls; 0 means no per-tool cap.
	MaxConcurrent int
	// Approval says whether the node's owner must confirm each remote call
	// ("" means ApprovalAuto); see approval.go.
	Approval ApprovalMode
	// ApprovalTimeout bounds the wait for the owner when positive; zero
	// means DefaultApprovalTimeout. The call's own deadline bounds it too.
	ApprovalTimeout time.Duration
	// Commands holds the approval of single commands of the tool
	// ([tools.NAME.commands.CMD] approval), by command name; see
	// approvalGate for how it combines with Approval.
	Commands map[string]ApprovalMode
	// RepeatLimit, when set, replaces Policy.RepeatLimit for this tool.
	RepeatLimit *int
	// HiddenCommands are commands of the tool never offered nor run
	// ([tools.NAME.commands.CMD] expose = false).
	HiddenCommands []string
}

// visible is s as it is offered: without its hidden commands.
func (p Policy) visible(s Spec) Spec {
	hidden := p.Tools[s.Name].HiddenCommands
	if len(hidden) == 0 {
		return s
	}
	s.Commands = slices.DeleteFunc(slices.Clone(s.Commands), func(c Command) bool { return slices.Contains(hidden, c.Command) })
	return s
}

// hiddenCommandErr is the answer to a call of a hidden command of s: the
// one a command the tool does not have gets, so a hidden command is
// neither run nor revealed. nil for any other call.
func (p Policy) hiddenCommandErr(s Spec, args map[string]json.RawMessage) error {
	hidden := p.Tools[s.Name].HiddenCommands
	cmd := CallCommand(s, args)
	if len(hidden) == 0 || cmd == "" || !slices.Contains(hidden, cmd) {
		return nil
	}
	v := p.visible(s)
	names := make([]string, len(v.Commands))
	for i, c := range v.Commands {
		names[i] = c.Command
	}
	return &ArgsError{Tool: s.Name, Problems: []string{fmt.Sprintf("unknown command %q: the commands are %s", cmd, quoteList(names))}}
}

// Exposure is a policy decision with the reason shown by `vcpnode tools`.
type Exposure struct {
	Exposed bool
	Reason  string
}

// Decide tells whether the tool described by s is exposed to the server and why.
// The rules apply in order; the first that matches decides.
func (p Policy) Decide(s Spec) Exposure {
	named := slices.Contains(p.ExposedTools, s.Name)
	switch o, hasOverride := p.Tools[s.Name]; {
	case s.FromServer:
		return Exposure{false, "the server's own tool, run through its bridge: offered on this machine only ([bridge] offer), never back to the server"}
	case slices.Contains(p.HiddenTools, s.Name):
		return Exposure{false, "hidden by hidden_tools"}
	case hasOverride && o.Expose != nil:
		return Exposure{*o.Expose, fmt.Sprintf("[tools.%s] expose = %t", s.Name, *o.Expose)}
	case s.Implicit:
		return Exposure{true, "called by the server by name and never registered; the tool refuses calls itself when it is not configured"}
	case s.Builtin && named:
		return Exposure{true, "built-in tool named in exposed_tools"}
	case s.Builtin:
		return Exposure{false, "built-in tools are exposed only when the config names them (exposed_tools or [tools." + s.Name + "] expose = true)"}
	case !s.DistributedExposed:
		return Exposure{false, "manifest says distributedExposed: false"}
	case len(p.ExposedTools) > 0 && !named:
		return Exposure{false, "not listed in exposed_tools"}
	case named:
		return Exposure{true, "listed in exposed_tools"}
	default:
		return Exposure{true, "plugins are exposed by default (exposed_tools is empty)"}
	}
}

// Timeout is the tool's effective per-call timeout: the [tools.NAME] override,
// else the tool's declared timeout, else DefaultTimeout. It is what the
// server is told in the manifest; the dispatcher's own deadline is a little shorter.
func (p Policy) Timeout(s Spec) time.Duration {
	if o := p.Tools[s.Name]; o.Timeout > 0 {
		return o.Timeout
	}
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// MaxConcurrent is the tool's own concurrency cap; 0 means only the global limit applies.
func (p Policy) MaxConcurrent(name string) int {
	return max(p.Tools[name].MaxConcurrent, 0)
}

// clone copies the slices and the map so that a caller who later mutates
// its Policy cannot change the dispatcher's copy underneath it.
func (p Policy) clone() Policy {
	c := p
	c.ExposedTools = slices.Clone(p.ExposedTools)
	c.HiddenTools = slices.Clone(p.HiddenTools)
	c.Tools = maps.Clone(p.Tools)
	return c
}
