package node

import (
	"context"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolsource"
	"github.com/vcpnode/vcpnode/toolsource/servertools"
)

// The server's own tools (package bridge): the session hands the client
// its frames and a send function; the tools join the registry as
// vcp_<ServerTool>, never exposed back to the server.

// newBridge makes the source of the server's tools and its client;
// observer mode has no node connection, so no bridge.
func (n *Node) newBridge() {
	if n.mode == config.ModeObserver {
		return
	}
	src := servertools.New(n.log, n.timings.bridgeListWait)
	n.bridge = src.Client()
	// First: its Prepare never refuses, so every pass that follows a new
	// list commits or discards it, and the list's wait ends.
	n.sources = append([]toolsource.Source{src}, n.sources...)
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
