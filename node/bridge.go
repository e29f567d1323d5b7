package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
)

// The server's own tools (package bridge): the session hands the client
// its frames and a send function; the tools join the registry as
// vcp_<ServerTool>, never exposed back to the server.

// newBridge makes the client of the server's bridge; observer mode has no
// node connection, so no bridge.
func (n *Node) newBridge() {
	if n.mode == config.ModeObserver {
		return
	}
	n.bridge = bridge.New(bridge.Options{Log: n.log, ListWait: n.timings.bridgeListWait, OnChange: n.serverToolsChanged})
}

// withServerTools is tools plus the server's, leaving out a server tool
// whose name a tool of this machine has.
func (n *Node) withServerTools(tools []toolhost.Tool, timeout time.Duration) ([]toolhost.Tool, []string) {
	if n.bridge == nil {
		return tools, nil
	}
	var warnings []string
	out := slices.Clone(tools)
	for _, t := range n.bridge.Tools(timeout) {
		name := t.Spec().Name
		if slices.ContainsFunc(tools, func(l toolhost.Tool) bool { return l.Spec().Name == name }) {
			warnings = append(warnings, fmt.Sprintf("the server's tool %s is not offered: this machine has a tool of that name", name))
			continue
		}
		out = append(out, t)
	}
	return out, warnings
}

// serverToolsChanged puts the server's new list in the registry beside
// this machine's tools, as they are in force.
func (n *Node) serverToolsChanged() {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	n.mu.Lock()
	local := slices.Clone(n.localTools)
	n.mu.Unlock()
	tools, warnings := n.withServerTools(local, n.Config().Bridge.Timeout.D())
	for _, w := range warnings {
		n.log.Warn().Msg(w)
	}
	reg := toolhost.NewRegistry()
	if err := reg.Replace(tools); err != nil {
		n.log.Warn().Err(err).Msg("the server's tools could not be added")
		return
	}
	n.disp.Swap(reg, n.disp.Policy())
	n.log.Info().Int("server_tools", len(tools)-len(local)).Msg("the server's tools changed")
}

// ServerTools is GET /v1/server/tools: the server's tools as this node
// reaches them, and the bridge's state; with refresh the server is asked
// again first.
func (n *Node) ServerTools(ctx context.Context, refresh bool) controlapi.ServerToolsResponse {
	out := controlapi.ServerToolsResponse{Tools: []controlapi.ServerTool{}}
	if n.bridge == nil {
		out.State = string(bridge.StateDisconnected)
		out.Message = "node.mode = \"observer\": no node connection, so no server tools"
		return out
	}
	if refresh {
		if _, err := n.bridge.Refresh(ctx); err != nil {
			out.Error = err.Error()
		}
	}
	st := n.bridge.Status()
	out.State, out.Message = string(st.State), st.Message
	cfg := n.Config()
	for _, p := range n.bridge.Plugins() {
		t := controlapi.ServerTool{Name: p.Name, Local: bridge.ToolName(p.Name), DisplayName: p.DisplayName,
			Description: p.Description, Version: p.Version, Offered: cfg.Bridge.Offers(p.Name)}
		for _, c := range p.Capabilities.InvocationCommands {
			t.Commands = append(t.Commands, controlapi.CommandStatus{Command: c.Command, Description: c.Description, Example: c.Example})
		}
		out.Tools = append(out.Tools, t)
	}
	return out
}

func (n *Node) serverToolsStatus() *controlapi.ServerToolsStatus {
	if n.bridge == nil {
		return nil
	}
	st := n.bridge.Status()
	out := &controlapi.ServerToolsStatus{State: string(st.State), Tools: st.Tools, Message: st.Message}
	cfg := n.Config()
	for _, p := range n.bridge.Plugins() {
		if cfg.Bridge.Offers(p.Name) {
			out.Offered++
		}
	}
	return out
}
