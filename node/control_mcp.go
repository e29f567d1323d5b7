package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// MCPTools lists the tools offered to MCP clients as `vcpnode mcp`
// publishes them (GET /v1/mcp/tools).
func (n *Node) MCPTools() []controlapi.MCPTool {
	out := []controlapi.MCPTool{}
	for _, t := range n.mcpServed() {
		out = append(out, mcpTool(t.Spec))
	}
	return out
}

// mcpServed is the registered tools MCP clients may see and call.
func (n *Node) mcpServed() []toolhost.ToolInfo {
	names := n.Config().MCP.Serve.Tools
	var out []toolhost.ToolInfo
	for _, t := range n.Tools() {
		switch {
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
	if !slices.ContainsFunc(n.mcpServed(), func(t toolhost.ToolInfo) bool { return t.Spec.Name == tool }) {
		err := fmt.Errorf("%w %q: it is not offered to MCP clients ([mcp.serve] tools, or the exposed tools)", toolhost.ErrUnknownTool, tool)
		return toolhost.Outcome{RequestID: requestID, Err: err.Error(), Cause: err}
	}
	done := make(chan toolhost.Outcome, 1)
	call := toolhost.Call{RequestID: requestID, Args: args, Local: true, Gated: true}
	if !n.disp.Dispatch(ctx, tool, call, func(o toolhost.Outcome) { done <- o }) {
		return toolhost.Outcome{RequestID: requestID, Err: fmt.Sprintf("request id %q is already in flight", requestID)}
	}
	return <-done
}

// mcpTool describes s for an MCP client.
func mcpTool(s toolhost.Spec) controlapi.MCPTool {
	t := controlapi.MCPTool{Name: s.Name, Title: s.DisplayName, Typed: s.Typed()}
	typed := commandsWithSchema(s)
	if len(typed) == 1 && len(s.Commands) == 1 {
		t.Description = strings.TrimSpace(s.Description)
		if t.Description == "" {
			t.Description = toolhost.Usage(s, "")
		}
		t.InputSchema = schemaJSON(typed[0].Schema)
		return t
	}
	// Several commands, or none typed: the invocation text says how to call
	// it, and "command" selects the command.
	t.Description = strings.TrimSpace(strings.TrimSpace(s.Description) + "\n\n" + toolhost.Usage(s, ""))
	props := map[string]any{}
	var commands []string
	for _, c := range s.Commands {
		if c.Command != "" {
			commands = append(commands, c.Command)
		}
		if c.Schema == nil {
			continue
		}
		for _, p := range c.Schema.Params {
			if _, seen := props[p.Name]; !seen && p.Name != schema.CommandArg {
				props[p.Name] = paramSchema(p)
			}
		}
	}
	inputSchema := map[string]any{"type": "object", "properties": props}
	if len(commands) > 0 {
		props[schema.CommandArg] = map[string]any{"type": "string", "enum": commands,
			"description": "which command of " + s.Name + " to run"}
		inputSchema["required"] = []string{schema.CommandArg}
	}
	if !t.Typed {
		// Plugins read every argument as text, as the VCP server sends them.
		inputSchema["additionalProperties"] = map[string]any{"type": "string"}
	}
	t.InputSchema, _ = json.Marshal(inputSchema)
	return t
}

func commandsWithSchema(s toolhost.Spec) []toolhost.Command {
	var out []toolhost.Command
	for _, c := range s.Commands {
		if c.Schema != nil {
			out = append(out, c)
		}
	}
	return out
}

// schemaJSON is the JSON Schema of sc: its source's own when it has one.
func schemaJSON(sc *schema.Schema) json.RawMessage {
	if len(sc.Raw) > 0 {
		return sc.Raw
	}
	props := map[string]any{}
	var required []string
	for _, p := range sc.Params {
		props[p.Name] = paramSchema(p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	inputSchema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		inputSchema["required"] = required
	}
	b, _ := json.Marshal(inputSchema)
	return b
}

func paramSchema(p schema.Param) map[string]any {
	m := map[string]any{}
	if p.Type != "" {
		m["type"] = string(p.Type)
	}
	if p.Description != "" {
		m["description"] = p.Description
	}
	if len(p.Enum) > 0 {
		m["enum"] = p.Enum
	}
	if p.Default != nil {
		m["default"] = p.Default
	}
	return m
}

func mcpServerStatus(in []mcp.Status) []controlapi.MCPServerStatus {
	var out []controlapi.MCPServerStatus
	for _, st := range in {
		last, _, _ := strings.Cut(strings.TrimSpace(st.LastError), "\n")
		out = append(out, controlapi.MCPServerStatus{
			Name: st.Name, Tool: st.Tool, Transport: st.Transport, State: string(st.State), Since: st.Since,
			Tools: st.Tools, Restarts: st.Restarts, Attempt: st.Attempt, RetryAt: st.RetryAt,
			// The server's own words may echo anything, the key included.
			LastError: config.Redact(last),
		})
	}
	return out
}
