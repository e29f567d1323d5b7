package node

import (
	"context"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/mcp"
)

// sourcesChangeWait gathers a burst of tool changes (servers listing one
// after another) into one rescan.
const sourcesChangeWait = 200 * time.Millisecond

// MCPServers describes the configured MCP servers for status output.
func (n *Node) MCPServers() []mcp.Status { return n.mcp.Servers() }

// sourcesChanged asks the node for a rescan, without blocking: a tool
// source's tools changed while in force (toolsource.Env.Changed).
func (n *Node) sourcesChanged() {
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// startFollow follows the tool sources' changes until ctx ends; the
// returned function, called when Run ends, waits for the follower.
func (n *Node) startFollow(ctx context.Context) (stop func()) {
	watchCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { n.guard("tool source follower", func() { n.followSources(watchCtx) }) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// followSources rescans when a tool source's tools changed (an MCP
// server's first listing, the server's new list), like a plugin folder
// change: the registration is rebuilt, and the node reconnects if what
// the server sees changed.
func (n *Node) followSources(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.changed:
		}
		t := time.NewTimer(sourcesChangeWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		rep, err := n.Rescan()
		if err != nil {
			n.log.Warn().Err(err).Msg("an MCP server's or a tool source's tools changed, but the new tool set could not be used; the previous one stays in force")
			continue
		}
		n.log.Info().Bool("reconnect", rep.Reconnected).Msg("MCP or tool source tools changed; tools rebuilt")
	}
}
