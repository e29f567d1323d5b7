package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/controlapi"
)

// mcpRefresh is how often `vcpnode mcp` asks the daemon for its tools: a
// reload or a plugin change shows up in clients within this.
const mcpRefresh = 3 * time.Second

func (a *app) mcpRefreshEvery() time.Duration {
	if a.mcpRefresh > 0 {
		return a.mcpRefresh
	}
	return mcpRefresh
}

// mcpBridge is the MCP server of `vcpnode mcp`: the daemon's offered tools,
// kept in step with it.
type mcpBridge struct {
	c   *controlapi.ControlClient
	srv *sdk.Server

	mu      sync.Mutex
	offered map[string]controlapi.MCPTool // by name, as last published
}

// sync publishes tools: new and changed ones are (re)added, gone ones
// removed. The SDK sends notifications/tools/list_changed to connected
// clients for each change, so nothing is touched when nothing changed.
func (b *mcpBridge) sync(tools []controlapi.MCPTool) (changed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range tools {
		seen[t.Name] = true
		if old, ok := b.offered[t.Name]; ok && sameMCPTool(old, t) {
			continue
		}
		b.offered[t.Name] = t
		b.srv.AddTool(&sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}, b.callTool(t.Name))
		changed = true
	}
	var gone []string
	for name := range b.offered {
		if !seen[name] {
			gone = append(gone, name)
			delete(b.offered, name)
		}
	}
	if len(gone) > 0 {
		b.srv.RemoveTools(gone...)
		changed = true
	}
	return changed
}

func sameMCPTool(a, b controlapi.MCPTool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description && a.Typed == b.Typed &&
		bytes.Equal(a.InputSchema, b.InputSchema)
}

// follow polls the daemon's tool list every interval until ctx ends. While
// the daemon cannot be reached the last list stays, said once on stderr.
func (b *mcpBridge) follow(ctx context.Context, every time.Duration, stderr io.Writer) {
	t := time.NewTicker(every)
	defer t.Stop()
	var failing string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, controlTimeout)
		tools, err := b.c.MCPTools(lctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if msg := err.Error(); msg != failing {
				failing = msg
				fmt.Fprintf(stderr, "vcpnode mcp: cannot read the daemon's tools (the last list stays): %s\n", msg)
			}
			continue
		}
		if failing != "" {
			failing = ""
			fmt.Fprintln(stderr, "vcpnode mcp: the daemon answers again")
		}
		if b.sync(tools) {
			fmt.Fprintf(stderr, "vcpnode mcp: the daemon's tools changed; now serving %d\n", len(tools))
		}
	}
}
