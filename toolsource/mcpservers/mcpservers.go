// Package mcpservers is the tool source of the [mcp.servers] tables: one
// supervised MCP client per server (toolhost/mcp), each server's tools
// offered as one tool. The host is made the first time servers are
// configured.
package mcpservers

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolsource"
)

// How long a commit waits for new servers to list their tools before
// registering without them (they are added when they come up).
const startWait = 15 * time.Second

// Source runs the configured MCP servers.
type Source struct {
	mu  sync.Mutex
	env toolsource.Env // the node's, from the first Prepare
	// committing: a change a server reports while a commit waits for the
	// servers is in the tools the node reads right after, so it asks for
	// no rescan.
	committing bool
	host       *mcp.Host
	closed     bool
}

// New makes the source; it runs nothing until servers are configured.
func New() *Source { return &Source{} }

// Prepare checks the [mcp.servers] tables (mcp.Check) and names one tool
// per server; it starts nothing.
func (s *Source) Prepare(cfg config.Config, env toolsource.Env) (toolsource.Prepared, error) {
	s.mu.Lock()
	s.env = env
	closed := s.closed
	s.mu.Unlock()
	servers := ServerConfigs(cfg)
	if len(servers) == 0 {
		return prepared{s: s, cfg: cfg}, nil
	}
	if closed {
		return nil, fmt.Errorf("mcp: %w", mcp.ErrClosed)
	}
	if err := mcp.Check(servers); err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return prepared{s: s, cfg: cfg, servers: servers}, nil
}

// ServerConfigs turns the [mcp.servers] tables into the host's configs, by name.
func ServerConfigs(cfg config.Config) []mcp.ServerConfig {
	out := make([]mcp.ServerConfig, 0, len(cfg.MCP.Servers))
	for name, s := range cfg.MCP.Servers {
		out = append(out, mcp.ServerConfig{
			Name: name, Command: s.Command, Args: slices.Clone(s.Args), Env: s.Env, Cwd: s.Cwd,
			URL: s.URL, Headers: s.Headers, SSE: s.Transport == config.MCPTransportSSE, Tool: s.Tool,
			Include: slices.Clone(s.Include), Exclude: slices.Clone(s.Exclude), Timeout: s.Timeout.D(),
			Sandbox: toolconfig.SandboxProfile(cfg, config.MCPSandboxKey(name)),
		})
	}
	slices.SortFunc(out, func(a, b mcp.ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type prepared struct {
	s       *Source
	cfg     config.Config
	servers []mcp.ServerConfig
}

// Specs stand for each server's tool, which exists once it runs.
func (p prepared) Specs() []toolhost.Spec {
	out := make([]toolhost.Spec, 0, len(p.servers))
	for _, c := range p.servers {
		out = append(out, toolhost.Spec{Name: c.ToolName(), Source: "mcp:" + c.Name})
	}
	return out
}

func (prepared) Discard() {}

// Commit starts new servers, stops removed ones and restarts changed
// ones, and waits (bounded) for new ones to list their tools. Nothing
// here refuses the config: a server that does not stop or start is a
// warning.
func (p prepared) Commit(func(string) bool) []string {
	s := p.s
	host, err := s.hostFor(p.cfg, len(p.servers) > 0)
	if err != nil {
		return []string{err.Error()}
	}
	if host == nil {
		return nil
	}
	s.mu.Lock()
	s.committing = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.committing = false
		s.mu.Unlock()
	}()
	var warnings []string
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	if err := host.Apply(ctx, p.servers); err != nil {
		warnings = append(warnings, fmt.Sprintf("mcp: %v", err))
	}
	host.Wait(ctx)
	for _, st := range host.Status() {
		warnings = append(warnings, st.Warnings...)
		if st.Tools == 0 && st.State != mcp.StateRunning {
			warnings = append(warnings, fmt.Sprintf("MCP server %s is not running yet (%s); its tool %s is registered when it is: %s",
				st.Name, st.State, st.Tool, st.LastError))
		}
	}
	return warnings
}

func (s *Source) hostFor(cfg config.Config, want bool) (*mcp.Host, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("mcp: %w", mcp.ErrClosed)
	}
	if s.host == nil && want {
		env := s.env
		opts := mcp.Options{
			Log:     env.Log,
			Sandbox: env.Sandbox,
			Environ: os.Environ(),
			PassEnv: slices.Clone(cfg.Plugins.PassEnv),
			Getenv:  env.Getenv,
			Secret:  []string{config.EnvKey},
			// A message bigger than a result may be is of no use: refuse it
			// before holding it (1 MiB for the envelope).
			MaxMessageBytes: cfg.Node.MaxResultBytes + config.MiB,
			OnChange:        func(string) { s.serverChanged() },
		}
		if env.Trees != nil {
			opts.ProcessTrees = env.Trees()
		}
		s.host = mcp.NewHost(opts)
	}
	return s.host, nil
}

// serverChanged asks the node to take a server's new tools in (first
// listing, list_changed, a restart with other tools): this source alone,
// as its Specs (one per configured server) stay as they are.
func (s *Source) serverChanged() {
	s.mu.Lock()
	quiet, changed := s.committing, s.env.Relisted
	if changed == nil {
		changed = s.env.Changed
	}
	s.mu.Unlock()
	if !quiet && changed != nil {
		changed()
	}
}

func (s *Source) current() *mcp.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// Tools are one tool per server that has listed its tools.
func (s *Source) Tools() []toolhost.Tool {
	if h := s.current(); h != nil {
		return h.Tools()
	}
	return nil
}

// Missing says why tool is not registered when it is the tool of a server
// that has not listed its tools yet (mcp.Host.Missing).
func (s *Source) Missing(tool string) (toolhost.Spec, error) {
	if h := s.current(); h != nil {
		return h.Missing(tool)
	}
	return toolhost.Spec{}, nil
}

// Servers lists the servers, or nil when none was ever configured.
func (s *Source) Servers() []mcp.Status {
	if h := s.current(); h != nil {
		return h.Status()
	}
	return nil
}

// Status is the servers' lines of the status.
func (s *Source) Status(st *controlapi.StatusResponse) {
	st.MCPServers = statusOf(s.Servers())
}

// statusOf is the servers as the control API shows them.
func statusOf(in []mcp.Status) []controlapi.MCPServerStatus {
	var out []controlapi.MCPServerStatus
	for _, st := range in {
		last, _, _ := strings.Cut(strings.TrimSpace(st.LastError), "\n")
		out = append(out, controlapi.MCPServerStatus{
			Name: st.Name, Tool: st.Tool, Transport: st.Transport, State: string(st.State), Since: st.Since,
			Tools: st.Tools, Restarts: st.Restarts, Attempt: st.Attempt, RetryAt: st.RetryAt,
			// The server's own words may echo anything, the key included.
			LastError: config.Redact(last), StartBudget: st.StartBudget,
		})
	}
	return out
}

// Close stops every server; later configs with servers are refused.
func (s *Source) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	host := s.host
	s.mu.Unlock()
	if host == nil {
		return nil
	}
	if err := host.Close(ctx); err != nil {
		return fmt.Errorf("some MCP servers did not stop: %w", err)
	}
	return nil
}
