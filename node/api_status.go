package node

import (
	"path/filepath"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// The node's answers to the control API's status and tool listings.

// Status is the node's part of GET /v1/status; the control server adds
// its own (version, socket, config file, metrics address).
func (n *Node) Status() controlapi.StatusResponse {
	conn, _ := n.State()
	conn.ToolsHeld = n.hub.ToolsHeld()
	var counts controlapi.ToolCounts
	cfg := n.Config()
	var renamed map[string]string
	for _, t := range n.Tools() {
		if t.Spec.Implicit || t.Spec.FromServer {
			continue // never registered (internal_request_file, the server's own tools)
		}
		if wire := serverName(cfg, t.Spec); wire != "" && t.Exposure.Exposed {
			if renamed == nil {
				renamed = map[string]string{}
			}
			renamed[t.Spec.Name] = wire
		}
		counts.Registered++
		if t.Exposure.Exposed {
			counts.Exposed++
		} else {
			counts.Hidden++
		}
	}
	for _, sp := range n.SkippedPlugins() {
		switch sp.Kind {
		case "unsupported":
			counts.Unsupported++
		case "invalid":
			counts.Invalid++
		}
	}
	inflight := []controlapi.InFlightStatus{}
	for _, c := range n.InFlight() {
		state := controlapi.CallRunning
		switch {
		case c.AwaitingApproval:
			state = controlapi.CallAwaitingApproval
		case c.Queued:
			state = controlapi.CallQueued
		}
		inflight = append(inflight, controlapi.InFlightStatus{
			RequestID: c.RequestID, Tool: c.Tool, Started: c.Started, Deadline: c.Deadline, State: state, Local: c.Local,
		})
	}
	ph := n.Placeholders().Placeholders
	phErrors := 0
	for _, p := range ph {
		if p.LastError != "" {
			phErrors++
		}
	}
	st := controlapi.StatusResponse{
		StartedAt: n.tel.started, Now: time.Now(),
		Name: n.Name(), HubURL: n.HubURL(), Mode: n.mode, Connection: conn, Tools: counts, InFlight: inflight,
		PendingApprovals: n.Approvals().Len() + len(n.obs.Pending()), Placeholders: len(ph), PlaceholderErrors: phErrors,
		Observers:   n.ObserverStatuses(),
		Sandbox:     n.sandboxStatus(), // sandbox.go
		ServerNames: renamed,
	}
	n.sourcesStatus(&st) // toolsource.go: MCP servers, plugins, the server's tools, every other source
	return st
}

// ToolStatuses is GET /v1/tools: the registered tools under the current
// policy, then the MCP servers without tools and the skipped plugins.
func (n *Node) ToolStatuses() controlapi.ToolsResponse {
	cfg := n.Config()
	pol := toolconfig.Policy(n.Config())
	out := controlapi.ToolsResponse{Tools: []controlapi.ToolStatus{}}
	ov := n.overrides.Load()
	if ov != nil {
		out.OverridesFile = ov.path
	}
	servers := map[string]mcp.Status{} // by source, "mcp:NAME"
	for _, st := range n.MCPServers() {
		servers["mcp:"+st.Name] = st
	}
	for _, t := range n.Tools() {
		mode, wait := pol.Approval(t.Spec)
		ts := controlapi.ToolStatus{
			Name: t.Spec.Name, DisplayName: t.Spec.DisplayName, Description: t.Spec.Description, Version: t.Spec.Version, Source: t.Spec.Source,
			Builtin: t.Spec.Builtin, Implicit: t.Spec.Implicit, Aliases: t.Spec.Aliases, Exposed: t.Exposure.Exposed, Reason: t.Exposure.Reason,
			TimeoutMs: t.Timeout.Milliseconds(), MaxConcurrent: t.MaxConcurrent, Approval: string(mode),
			Commands:      commandStatuses(t.Spec),
			Sandbox:       n.toolProfile(t.Spec), // sandbox.go
			SandboxGrants: n.toolGrants(t.Spec),
		}
		ts.ServerName = serverName(cfg, t.Spec)
		if !t.Spec.Implicit {
			first := toolhost.Command{}
			if len(t.Spec.Commands) > 0 {
				first = t.Spec.Commands[0]
			}
			ts.Call = textproto.CallTemplate(t.Spec, first)
		}
		if n.tel != nil {
			ts.Calls, ts.LastCall = n.tel.usage.Of(t.Spec.Name)
		}
		if ov != nil {
			if o, ok := ov.o.Tools[t.Spec.Name]; ok {
				ts.Override = &o
			}
		}
		if mode == toolhost.ApprovalAsk {
			// The wait counts against the call's deadline: show the window
			// a call really gets.
			if t.Timeout > 0 {
				wait = min(wait, t.Timeout)
			}
			ts.ApprovalTimeoutMs = wait.Milliseconds()
		}
		if st, ok := servers[t.Spec.Source]; ok {
			delete(servers, t.Spec.Source)
			ts.State = string(st.State)
			if st.State != mcp.StateRunning && st.LastError != "" {
				ts.Reason += "; MCP server down: " + config.Redact(st.LastError)
			}
		}
		out.Tools = append(out.Tools, ts)
	}
	for _, st := range n.MCPServers() {
		if _, left := servers["mcp:"+st.Name]; !left {
			continue
		}
		why := "its tools were never listed"
		if st.LastError != "" {
			why += ": " + config.Redact(st.LastError)
		}
		out.Tools = append(out.Tools, controlapi.ToolStatus{
			Name: st.Tool, Source: "mcp:" + st.Name, Reason: string(st.State) + ": " + why,
			Skipped: string(st.State), State: string(st.State),
		})
	}
	for _, sp := range n.SkippedPlugins() {
		name := sp.Name
		if name == "" {
			// A manifest too broken to name itself goes by its folder.
			name = "(" + filepath.Base(filepath.Dir(sp.Path)) + ")"
		}
		out.Tools = append(out.Tools, controlapi.ToolStatus{
			Name: name, Source: sp.Path, Reason: skippedReason(sp.Kind, sp.Reason), Skipped: sp.Kind,
		})
	}
	return out
}

// commandStatuses shows a tool's commands and, for typed ones, their
// parameters: the console builds its forms from them, and loads Call into
// its executor.
func commandStatuses(s toolhost.Spec) []controlapi.CommandStatus {
	var out []controlapi.CommandStatus
	for _, c := range s.Commands {
		cs := controlapi.CommandStatus{Command: c.Command, Description: c.Description, Example: c.Example,
			Call: textproto.CallTemplate(s, c)}
		if c.Schema != nil {
			cs.Typed = true
			cs.Params = []controlapi.ParamStatus{}
			for _, p := range c.Schema.Params {
				cs.Params = append(cs.Params, controlapi.ParamStatus{
					Name: p.Name, Description: p.Description, Type: string(p.Type), Required: p.Required,
					Enum: p.Enum, Default: p.Default, Alias: p.Alias,
				})
			}
		}
		out = append(out, cs)
	}
	return out
}

// skippedReason is "kind: reason", with a reason for every kind even when
// the scan gave none (a disabled plugin is disabled by its file name).
func skippedReason(kind, reason string) string {
	if reason == "" {
		switch kind {
		case "disabled":
			reason = "its manifest is renamed plugin-manifest.json.block; rename it back to enable the plugin"
		default:
			reason = "no reason recorded"
		}
	}
	return kind + ": " + reason
}
