package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// commandArg is the argument that selects the MCP tool, the VCP convention
// for multi-command plugins.
const commandArg = schema.CommandArg

// injectedArgs are keys the VCP server adds to every call; an MCP tool that
// does not declare them must not receive them (many schemas forbid extra
// properties).
var injectedArgs = []string{"maid", "valet", "river_context", "vref_files", "__vcp_timed_call",
	"tool_name", "archery", "ink", "river", "vref", "timely_contact", "tool_password"}

// toolSet is one listing of a server, made into the VCP tool.
type toolSet struct {
	spec     toolhost.Spec
	commands map[string]*command // by command name
	names    []string            // command names: the MCP tools in the server's order, then the node's
	tools    int                 // how many of names are MCP tools
	warnings []string
	key      string // changes when the registration would
}

// command is one MCP tool, or one of the node's commands for resources
// and prompts (extras.go).
type command struct {
	name   string
	kind   commandKind
	schema *schema.Schema
	params map[string]string // wire name (alias or name) → MCP property name
}

// buildToolSet makes the VCP tool of one listing: the included tools, each
// a typed command. A tool whose schema cannot be used is left out with a
// warning; the others are offered.
func buildToolSet(cfg ServerConfig, init *sdk.InitializeResult, tools []*sdk.Tool) *toolSet {
	set := &toolSet{commands: map[string]*command{}}
	include := map[string]bool{}
	for _, n := range cfg.Include {
		include[n] = true
	}
	seen := map[string]bool{}
	for _, t := range tools {
		if t == nil || t.Name == "" {
			set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s listed a tool without a name; left out", cfg.Name))
			continue
		}
		if seen[t.Name] {
			set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s listed tool %q twice; the first is used", cfg.Name, t.Name))
			continue
		}
		seen[t.Name] = true
		if (len(include) > 0 && !include[t.Name]) || slices.Contains(cfg.Exclude, t.Name) {
			continue
		}
		schema, err := convertSchema(t.Description, t.InputSchema)
		if err != nil {
			set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s: tool %q left out: %v", cfg.Name, t.Name, err))
			continue
		}
		c := &command{name: t.Name, schema: schema, params: map[string]string{}}
		for _, p := range schema.Params {
			c.params[p.WireName()] = p.Name
		}
		set.commands[t.Name] = c
		set.names = append(set.names, t.Name)
		set.spec.Commands = append(set.spec.Commands, toolhost.Command{Command: t.Name, Schema: schema})
	}
	title, version := cfg.Name, ""
	if init != nil && init.ServerInfo != nil {
		title, version = firstOf(init.ServerInfo.Title, init.ServerInfo.Name, cfg.Name), init.ServerInfo.Version
	}
	set.tools = len(set.names)
	addExtras(set, cfg, init, title, func(name string) bool {
		return (len(include) == 0 || include[name]) && !slices.Contains(cfg.Exclude, name)
	})
	for n := range include {
		if !seen[n] && !isExtra(n) {
			set.warnings = append(set.warnings, fmt.Sprintf("MCP server %s has no tool %q (named in include)", cfg.Name, n))
		}
	}
	slices.Sort(set.warnings)

	set.spec.Name = cfg.ToolName()
	set.spec.Source = "mcp:" + cfg.Name
	set.spec.Timeout = cfg.Timeout
	set.spec.DistributedExposed = true
	set.spec.DisplayName = "MCP " + title
	set.spec.Version = version
	// The generated text of each command starts with this, so it stays one
	// line; the server's instructions are left out for the same reason.
	set.spec.Description = fmt.Sprintf("A tool of the MCP server %q.", title)

	// The key covers everything the registration is made of.
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s|%s\n", set.spec.Name, set.spec.DisplayName, set.spec.Version, set.spec.Description, set.spec.Timeout)
	for _, n := range set.names {
		fmt.Fprintf(&b, "%s %s\n", n, set.commands[n].schema.Raw)
	}
	set.key = b.String()
	return set
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Tool is the VCP tool of one server as one listing made it.
type Tool struct {
	srv *server
	set *toolSet
}

// Spec is fixed for the Tool's life; a new listing makes a new Tool.
func (t *Tool) Spec() toolhost.Spec { return t.set.spec }

// Invoke runs the MCP tool the "command" argument names (the only one when
// the server offers one) with the other arguments, mapped back from their
// aliases. Cancelling ctx sends MCP cancellation and returns at once.
func (t *Tool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	cmd, err := t.pick(call.Args)
	if err != nil {
		return nil, err
	}
	args := make(map[string]json.RawMessage, len(call.Args))
	for k, v := range call.Args {
		name, declared := cmd.params[k]
		switch {
		case declared:
			args[name] = v
		case k == commandArg:
		case slices.Contains(injectedArgs, k):
		default:
			args[k] = v // let the server judge an argument its schema does not name
		}
	}
	// The node's own commands check their arguments before anything is sent.
	send := func(ctx context.Context, cs *sdk.ClientSession) (any, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: cmd.name, Arguments: args})
	}
	if cmd.kind != kindTool {
		if send, err = extraRequest(t.srv.cfg.Name, cmd.kind, args); err != nil {
			return nil, err
		}
	}
	live, err := t.srv.current()
	if err != nil {
		return nil, err
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(live.calls, stop)()
	answer, err := send(cctx, live.cs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		var answer *jsonrpc.Error
		if !errors.As(err, &answer) {
			// The session died under the call: say why, once the
			// supervisor found out (bounded, the call must return).
			wait := time.NewTimer(2 * drainWait)
			defer wait.Stop()
			select {
			case <-live.ended:
				return nil, fmt.Errorf("MCP server %s stopped during the call: %s", t.srv.cfg.Name, live.reason)
			case <-wait.C:
			}
		}
		return nil, fmt.Errorf("MCP server %s, %s: %w", t.srv.cfg.Name, cmd.name, err)
	}
	res, isCall := answer.(*sdk.CallToolResult)
	if !isCall {
		return answer, nil
	}
	out, err := mapResult(t.srv.cfg.Name, cmd.name, res)
	return out, live.explain(err)
}

// pick finds the MCP tool a call is for.
func (t *Tool) pick(args map[string]json.RawMessage) (*command, error) {
	raw, has := args[commandArg]
	if !has {
		if len(t.set.names) == 1 {
			return t.set.commands[t.set.names[0]], nil
		}
		return nil, fmt.Errorf("say which tool of MCP server %s to run with command:「始」NAME「末」; its tools: %s",
			t.srv.cfg.Name, strings.Join(t.set.names, ", "))
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return nil, fmt.Errorf("command must be a tool name (a string); the tools of MCP server %s: %s",
			t.srv.cfg.Name, strings.Join(t.set.names, ", "))
	}
	c, ok := t.set.commands[strings.TrimSpace(name)]
	if !ok {
		return nil, fmt.Errorf("MCP server %s offers no tool %q; its tools: %s",
			t.srv.cfg.Name, name, strings.Join(t.set.names, ", "))
	}
	return c, nil
}
