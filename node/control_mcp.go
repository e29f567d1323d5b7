package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// MCPTools lists the tools offered to MCP clients as `vcpnode mcp`
// publishes them (GET /v1/mcp/tools).
func (n *Node) MCPTools() []controlapi.MCPTool {
	out := []controlapi.MCPTool{}
	for _, t := range n.mcpServed() {
		mt, err := mcpTool(t.Spec)
		if err != nil {
			// A schema that cannot be written leaves the tool out of the
			// list, never the list empty.
			n.log.Warn().Err(err).Msg("tool left out of the MCP tool list")
			continue
		}
		out = append(out, mt)
	}
	return out
}

// mcpServed is the registered tools MCP clients may see and call.
func (n *Node) mcpServed() []toolhost.ToolInfo {
	cfg := n.Config()
	names := cfg.MCP.Serve.Tools
	var out []toolhost.ToolInfo
	for _, t := range n.Tools() {
		switch {
		case t.Spec.FromServer:
			// Opt-in, by the server's own name: they reach far beyond this machine.
			if name, ok := bridge.ServerName(t.Spec.Name); ok && cfg.Bridge.Offers(name) {
				out = append(out, t)
			}
		case t.Spec.Implicit:
			// Called by the VCP server by name with its own arguments; of no use to a model.
		case len(names) > 0:
			if slices.Contains(names, t.Spec.Name) {
				out = append(out, t)
			}
		case t.Exposure.Exposed:
			out = append(out, t)
		}
	}
	return out
}

// callMCP runs a call from an MCP client: through the dispatcher like the
// owner's `vcpnode call` (limits, deadline, audit), but only for a tool
// offered to MCP clients, and past the approval gate.
func (n *Node) callMCP(ctx context.Context, requestID, tool string, args map[string]json.RawMessage) toolhost.Outcome {
	served := slices.ContainsFunc(n.mcpServed(), func(t toolhost.ToolInfo) bool { return t.Spec.Name == tool })
	if names := n.Config().MCP.Serve.Tools; !served && (len(names) == 0 || slices.Contains(names, tool)) {
		// The tool of an MCP server that has not listed yet: the
		// dispatcher says it is not running.
		_, down := n.mcp.Missing(tool)
		served = down != nil
	}
	if name, server := bridge.ServerName(tool); !served && server && n.Config().Bridge.Offers(name) &&
		!slices.ContainsFunc(n.Tools(), func(t toolhost.ToolInfo) bool { return t.Spec.Name == tool }) {
		// Offered by name, and the server's list does not hold it (now).
		if err := n.unlistedServerTool(tool, false); err != nil {
			return toolhost.Outcome{RequestID: requestID, Err: err.Error(), Cause: err}
		}
	}
	if !served {
		err := fmt.Errorf("%w %q: it is not offered to MCP clients ([mcp.serve] tools, the exposed tools, [bridge] offer)", toolhost.ErrUnknownTool, tool)
		return toolhost.Outcome{RequestID: requestID, Err: err.Error(), Cause: err}
	}
	done := make(chan toolhost.Outcome, 1)
	call := toolhost.Call{RequestID: requestID, Args: args, Local: true, Gated: true}
	if !n.disp.Dispatch(ctx, tool, call, func(o toolhost.Outcome) { done <- o }) {
		return toolhost.Outcome{RequestID: requestID, Err: fmt.Sprintf("request id %q is already in flight", requestID)}
	}
	return <-done
}

// mcpTool describes s for an MCP client. Its inputSchema is the one the
// prompt formats give the tool (textproto.ParametersSchema): the source's
// own, else the typed commands' parameters and the names an untyped
// command's example passes, with "command" for several commands.
func mcpTool(s toolhost.Spec) (controlapi.MCPTool, error) {
	t := controlapi.MCPTool{Name: s.Name, Title: s.DisplayName, Typed: s.Typed()}
	if len(s.Commands) == 1 && s.Commands[0].Schema != nil {
		t.Description = strings.TrimSpace(s.Description)
		if t.Description == "" {
			t.Description = toolhost.Usage(s, "")
		}
	} else {
		// Several commands, or none typed: the invocation text says how
		// to call it.
		t.Description = strings.TrimSpace(strings.TrimSpace(s.Description) + "\n\n" + toolhost.Usage(s, ""))
	}
	params, err := textproto.ParametersSchema(s)
	if err != nil {
		return t, fmt.Errorf("tool %q: %w", s.Name, err)
	}
	if !t.Typed {
		// Plugins read every argument as text, as the VCP server sends
		// them, and take arguments their examples do not show.
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(params, &obj); err != nil {
			return t, fmt.Errorf("tool %q: %w", s.Name, err)
		}
		obj["additionalProperties"] = json.RawMessage(`{"type":"string"}`)
		if params, err = json.Marshal(obj); err != nil {
			return t, fmt.Errorf("tool %q: %w", s.Name, err)
		}
	}
	t.InputSchema = params
	return t, nil
}
