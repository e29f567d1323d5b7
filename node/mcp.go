package node

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolsource"
)

// sourcesChangeWait gathers a burst of tool changes (servers listing one
// after another) into one rescan.
const sourcesChangeWait = 200 * time.Millisecond

// MCPServers describes the configured MCP servers for status output.
func (n *Node) MCPServers() []mcp.Status { return n.mcp.Servers() }

// followWork is what the follower is to do: a rescan (all), or commit
// the sources in alone again.
type followWork struct {
	mu    sync.Mutex
	all   bool
	alone []toolsource.Source
}

// sourcesChanged asks the node for a rescan, without blocking: a tool
// source's tools changed while in force (toolsource.Env.Changed).
func (n *Node) sourcesChanged() {
	n.follow.mu.Lock()
	n.follow.all = true
	n.follow.mu.Unlock()
	n.wakeFollower()
}

// sourceRelisted asks the node to commit src alone again, without
// blocking: its tools changed, and nothing the config decides did
// (toolsource.Env.Relisted).
func (n *Node) sourceRelisted(src toolsource.Source) {
	n.follow.mu.Lock()
	if !slices.Contains(n.follow.alone, src) {
		n.follow.alone = append(n.follow.alone, src)
	}
	n.follow.mu.Unlock()
	n.wakeFollower()
}

func (n *Node) wakeFollower() {
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// takeFollow is the work asked for since the last take.
func (n *Node) takeFollow() (all bool, alone []toolsource.Source) {
	n.follow.mu.Lock()
	defer n.follow.mu.Unlock()
	all, alone = n.follow.all, n.follow.alone
	n.follow.all, n.follow.alone = false, nil
	return all, alone
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
// server's first listing), like a plugin folder change, or commits a
// source alone again (the server's new list): the registration is
// rebuilt, and the node reconnects if what the server sees changed.
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
		all, alone := n.takeFollow()
		if !all && len(alone) > 0 {
			if rep, ok := n.recommit(alone); ok { // reload.go
				n.log.Info().Bool("reconnect", rep.Reconnected).Int("warnings", len(rep.Warnings)).Msg("a tool source's tools changed; tools rebuilt")
				continue
			}
		}
		rep, err := n.Rescan()
		if err != nil {
			n.log.Warn().Err(err).Msg("an MCP server's or a tool source's tools changed, but the new tool set could not be used; the previous one stays in force")
			continue
		}
		n.log.Info().Bool("reconnect", rep.Reconnected).Msg("MCP or tool source tools changed; tools rebuilt")
	}
}
