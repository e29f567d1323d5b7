package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
	"github.com/vcpnode/vcpnode/toolsource/servertools"
)

// The server's own tools (package bridge): the session hands the client
// its frames and a send function; the tools join the registry as
// vcp_<ServerTool>, never exposed back to the server.

// errObserverNoServerTools: observer mode has no bridge.
var errObserverNoServerTools = errors.New("node.mode = \"observer\": no node connection, so no server tools")

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
		out.Message = errObserverNoServerTools.Error()
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

// unknownServerTool is a call of vcp_<Name> that has no tool here: the
// bridge's words for why, as toolhost.ErrUnknownTool too.
type unknownServerTool struct {
	why  *bridge.UnlistedError
	text string
}

func (e *unknownServerTool) Error() string { return e.text }

func (e *unknownServerTool) Unwrap() []error { return []error{toolhost.ErrUnknownTool, e.why} }

// unlistedServerTool says why local, a server tool's local name, is not
// registered: the server's list has no such tool (with the one the owner
// likely meant), the list has not come, the server has no bridge or is
// not connected, or in observer mode, there is no bridge. For an MCP
// client (owner false) it says no more than that, and names no other
// tool. Nil for a name that is not a server tool's.
func (n *Node) unlistedServerTool(local string, owner bool) error {
	name, ok := bridge.ServerName(local)
	switch {
	case !ok:
		return nil
	case n.bridge == nil:
		return fmt.Errorf("%w %q: %w", toolhost.ErrUnknownTool, local, errObserverNoServerTools)
	}
	why := n.bridge.Unlisted(name)
	if !owner {
		return &unknownServerTool{why: why, text: fmt.Sprintf("%s %q: %s", toolhost.ErrUnknownTool, local, why)}
	}
	text := why.Error()
	if errors.Is(why, bridge.ErrNotOffered) {
		if near := humantext.Closest(name, why.Names); near != "" && near != name {
			text += fmt.Sprintf("; did you mean %s?", near)
		}
	}
	switch {
	case errors.Is(why, bridge.ErrNoBridge):
		text += "; vcpnode server tools --refresh asks again"
	case errors.Is(why, bridge.ErrNoListYet):
		text += "; vcpnode server tools --refresh waits for it"
	case errors.Is(why, bridge.ErrNotConnected):
		text += "; vcpnode status says why"
	default:
		text += "; vcpnode server tools lists them"
	}
	return &unknownServerTool{why: why, text: text}
}

// serverToolAs is the local name of the server's tool called name, when
// the server lists one: what an owner who typed a server tool's bare name
// meant.
func (n *Node) serverToolAs(name string) (string, bool) {
	if n.bridge == nil {
		return "", false
	}
	for _, p := range n.bridge.Plugins() {
		if p.Name == name {
			return bridge.ToolName(name), true
		}
	}
	return "", false
}
