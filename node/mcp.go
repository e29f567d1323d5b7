package node

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// How long New and a reload wait for new MCP servers to list their tools
// before registering without them (they are added when they come up), and
// how long Run's end waits for the servers to stop.
const (
	mcpStartWait  = 15 * time.Second
	mcpCloseWait  = 10 * time.Second
	mcpChangeWait = 200 * time.Millisecond // gathers a burst of list changes
)

// mcpRuntime owns the MCP host: one supervised client per [mcp.servers.NAME].
// The host is made the first time servers are configured.
type mcpRuntime struct {
	log    zerolog.Logger
	getenv func(string) string
	trees  *proctree.Lazy // the node's
	// sandbox confines the stdio servers (the node's; nil: unconfined).
	sandbox *sandbox.Sandbox
	// changed wakes the node when a server's tool changed (first listing,
	// list_changed, a restart with other tools), or a tool source's
	// (toolsource.Env.Changed): a rescan re-registers.
	changed chan struct{}

	mu     sync.Mutex
	host   *mcp.Host
	closed bool
}

func newMCPRuntime(log zerolog.Logger, getenv func(string) string, trees *proctree.Lazy, sb *sandbox.Sandbox) *mcpRuntime {
	return &mcpRuntime{log: log, getenv: getenv, trees: trees, sandbox: sb, changed: make(chan struct{}, 1)}
}

// serverConfigs turns the [mcp.servers] tables into the host's configs, by name.
func serverConfigs(cfg config.Config) []mcp.ServerConfig {
	out := make([]mcp.ServerConfig, 0, len(cfg.MCP.Servers))
	for name, s := range cfg.MCP.Servers {
		out = append(out, mcp.ServerConfig{
			Name: name, Command: s.Command, Args: slices.Clone(s.Args), Env: s.Env, Cwd: s.Cwd,
			URL: s.URL, Headers: s.Headers, SSE: s.Transport == config.MCPTransportSSE, Tool: s.Tool,
			Include: slices.Clone(s.Include), Exclude: slices.Clone(s.Exclude), Timeout: s.Timeout.D(),
			Sandbox: toolconfig.SandboxProfile(cfg, config.MCPSandboxKey(name)),
		})
	}
	slices.SortFunc(out, func(a, b mcp.ServerConfig) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// checkOpen refuses to plan servers once Run has ended and closed the host.
func (rt *mcpRuntime) checkOpen() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return fmt.Errorf("mcp: %w", mcp.ErrClosed)
	}
	return nil
}

// apply is the MCP part of committing a config: it starts new servers,
// stops removed ones and restarts changed ones, waits (bounded) for new
// ones to list their tools, and returns one tool per server that has.
// Nothing here refuses the config (check did): a server that does not
// stop or start is a warning.
func (rt *mcpRuntime) apply(cfg config.Config, cfgs []mcp.ServerConfig) ([]toolhost.Tool, []string) {
	host, err := rt.hostFor(cfg, len(cfgs) > 0)
	if err != nil {
		return nil, []string{err.Error()}
	}
	if host == nil {
		return nil, nil
	}
	var warnings []string
	ctx, cancel := context.WithTimeout(context.Background(), mcpStartWait)
	defer cancel()
	if err := host.Apply(ctx, cfgs); err != nil {
		warnings = append(warnings, fmt.Sprintf("mcp: %v", err))
	}
	host.Wait(ctx)
	// What changed up to here is in the tools returned below: no rescan
	// for it (a change from now on signals again).
	select {
	case <-rt.changed:
	default:
	}
	for _, st := range host.Status() {
		warnings = append(warnings, st.Warnings...)
		if st.Tools == 0 && st.State != mcp.StateRunning {
			warnings = append(warnings, fmt.Sprintf("MCP server %s is not running yet (%s); its tool %s is registered when it is: %s",
				st.Name, st.State, st.Tool, st.LastError))
		}
	}
	return host.Tools(), warnings
}

func (rt *mcpRuntime) hostFor(cfg config.Config, want bool) (*mcp.Host, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return nil, fmt.Errorf("mcp: %w", mcp.ErrClosed)
	}
	if rt.host == nil && want {
		rt.host = mcp.NewHost(mcp.Options{
			Log:          rt.log,
			ProcessTrees: rt.trees.Get(),
			Sandbox:      rt.sandbox,
			Environ:      os.Environ(),
			PassEnv:      slices.Clone(cfg.Plugins.PassEnv),
			Getenv:       rt.getenv,
			Secret:       []string{config.EnvKey},
			// A message bigger than a result may be is of no use: refuse it
			// before holding it (1 MiB for the envelope).
			MaxMessageBytes: cfg.Node.MaxResultBytes + config.MiB,
			OnChange:        func(string) { rt.signalChange() },
		})
	}
	return rt.host, nil
}

// signalChange asks the node for a rescan, without blocking.
func (rt *mcpRuntime) signalChange() {
	select {
	case rt.changed <- struct{}{}:
	default:
	}
}

// missing says why tool is not registered when it is the tool of an MCP
// server that has not listed its tools yet (mcp.Host.Missing).
func (rt *mcpRuntime) missing(tool string) (toolhost.Spec, error) {
	rt.mu.Lock()
	host := rt.host
	rt.mu.Unlock()
	if host == nil {
		return toolhost.Spec{}, nil
	}
	return host.Missing(tool)
}

// status lists the servers, or nil when none was ever configured.
func (rt *mcpRuntime) status() []mcp.Status {
	rt.mu.Lock()
	host := rt.host
	rt.mu.Unlock()
	if host == nil {
		return nil
	}
	return host.Status()
}

func (rt *mcpRuntime) close() {
	rt.mu.Lock()
	rt.closed = true
	host := rt.host
	rt.mu.Unlock()
	if host == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpCloseWait)
	defer cancel()
	if err := host.Close(ctx); err != nil {
		rt.log.Warn().Err(err).Msg("some MCP servers did not stop")
	}
}

// MCPServers describes the configured MCP servers for status output.
func (n *Node) MCPServers() []mcp.Status { return n.mcp.status() }

// startMCP follows MCP tool changes until ctx ends; the returned function,
// called when Run ends (after in-flight calls were drained), stops the
// servers.
func (n *Node) startMCP(ctx context.Context) (stop func()) {
	watchCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { n.guard("MCP follower", func() { n.followMCP(watchCtx) }) })
	return func() {
		cancel()
		wg.Wait()
		n.mcp.close()
	}
}

// followMCP rescans when a server's tool or a tool source's tools changed,
// like a plugin folder change: the registration is rebuilt, and the node
// reconnects if what the server sees changed.
func (n *Node) followMCP(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.mcp.changed:
		}
		t := time.NewTimer(mcpChangeWait)
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
