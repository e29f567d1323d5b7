package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// ErrClosed: the host was closed.
var ErrClosed = errors.New("MCP host is closed")

// Host runs the configured MCP servers, each supervised on its own.
type Host struct {
	o Options

	mu      sync.Mutex
	closed  bool
	servers map[string]*server
	ctx     context.Context
	cancel  context.CancelFunc
	// ownTrees: o.ProcessTrees was made by NewHost and is closed by Close.
	ownTrees bool
	// ran holds the servers started and not yet seen ended, so Close can
	// close the Manager once the last one ended.
	ran []*server
}

// NewHost returns a host with no servers; Apply starts them.
func NewHost(o Options) *Host {
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{o: o.withDefaults(), servers: map[string]*server{}, ctx: ctx, cancel: cancel}
	if h.o.ProcessTrees == nil {
		trees, err := proctree.New(proctree.Options{Log: h.o.Log})
		if err != nil {
			h.o.Log.Warn().Err(err).Msg("the processes of MCP stdio servers cannot be tracked as trees here; " +
				"stopping a server stops its process group only (the server alone without groups)")
		} else {
			h.o.ProcessTrees, h.ownTrees = trees, true
		}
	}
	return h
}

// Check validates a whole server list: every table, and no two servers
// making the same VCP tool.
func Check(cfgs []ServerConfig) error {
	var errs []error
	names := map[string]bool{}
	tools := map[string]string{}
	for _, c := range cfgs {
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
		}
		if names[c.Name] {
			errs = append(errs, fmt.Errorf("mcp.servers.%s: defined twice", c.Name))
		}
		names[c.Name] = true
		if other, ok := tools[c.ToolName()]; ok {
			errs = append(errs, fmt.Errorf("mcp.servers.%s: tool %q is already the tool of mcp.servers.%s; set tool = \"…\"",
				c.Name, c.ToolName(), other))
		}
		tools[c.ToolName()] = c.Name
	}
	return errors.Join(errs...)
}

// Apply makes the running servers match cfgs: new ones start, removed ones
// stop, and ones whose config changed restart; the others are left
// running. It does not wait for servers to start (see Wait).
func (h *Host) Apply(ctx context.Context, cfgs []ServerConfig) error {
	if err := Check(cfgs); err != nil {
		return err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	want := map[string]ServerConfig{}
	for _, c := range cfgs {
		want[c.Name] = c
	}
	var stopping []*server
	for name, s := range h.servers {
		if c, ok := want[name]; !ok || !c.Equal(s.cfg) {
			stopping = append(stopping, s)
			delete(h.servers, name)
		}
	}
	for _, c := range cfgs {
		if _, ok := h.servers[c.Name]; ok {
			continue
		}
		s := newServer(c, h.o)
		h.servers[c.Name] = s
		h.ran = append(slices.DeleteFunc(h.ran, func(s *server) bool { return allDone([]*server{s}) }), s)
		s.start(h.ctx)
	}
	h.mu.Unlock()
	var errs []error
	for _, s := range stopping {
		h.o.Log.Info().Str("mcp_server", s.cfg.Name).Msg("stopping MCP server (removed or changed)")
		if err := s.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Wait returns when every server made its first attempt to start (or ctx
// ends), so the first registration includes the servers that came up.
func (h *Host) Wait(ctx context.Context) {
	for _, s := range h.list() {
		select {
		case <-s.first:
		case <-ctx.Done():
			return
		}
	}
}

func (h *Host) list() []*server {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*server, 0, len(h.servers))
	for _, s := range h.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *server) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
	return out
}

// Tools is one VCP tool per server that has listed its tools at least once,
// made from its latest listing. A server that is down keeps its last tool:
// calls then answer that it is not running.
func (h *Host) Tools() []toolhost.Tool {
	var out []toolhost.Tool
	for _, s := range h.list() {
		s.mu.Lock()
		set := s.set
		s.mu.Unlock()
		if set != nil {
			out = append(out, &Tool{srv: s, set: set})
		}
	}
	return out
}

// Missing says why tool is not among Tools when it is the tool of a
// configured server that has not listed its tools yet (starting, or
// restarting after failed starts): a call of it is told that, not that the
// tool is unknown. spec describes the tool for the exposure policy. The
// error is nil when tool is no server's, or its server has listed.
func (h *Host) Missing(tool string) (spec toolhost.Spec, err error) {
	for _, s := range h.list() {
		if s.cfg.ToolName() != tool {
			continue
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.set != nil {
			return toolhost.Spec{}, nil
		}
		spec = toolhost.Spec{Name: tool, Source: "mcp:" + s.cfg.Name, Timeout: s.cfg.Timeout, DistributedExposed: true}
		return spec, s.notRunningLocked()
	}
	return toolhost.Spec{}, nil
}

// Status describes one server for `vcpnode status` and `tools --all`.
type Status struct {
	Name      string    `json:"name"`
	Tool      string    `json:"tool"`
	Transport string    `json:"transport"`
	State     State     `json:"state"`
	Since     time.Time `json:"since"`
	Tools     int       `json:"tools"`
	Restarts  int       `json:"restarts"`
	// Attempt counts failed starts in a row; RetryAt is when the next one
	// starts, while restarting.
	Attempt   int        `json:"attempt,omitempty"`
	RetryAt   *time.Time `json:"retryAt,omitempty"`
	LastError string     `json:"lastError,omitempty"`
	Warnings  []string   `json:"warnings,omitempty"`
	// StartBudget is how long the start under way may take and why, while
	// starting with a longer budget than usual.
	StartBudget string `json:"startBudget,omitempty"`
}

// Status lists every server, by name.
func (h *Host) Status() []Status {
	var out []Status
	for _, s := range h.list() {
		s.mu.Lock()
		st := Status{Name: s.cfg.Name, Tool: s.cfg.ToolName(), Transport: s.cfg.Transport(),
			State: s.state, Since: s.since, Restarts: s.restarts, Attempt: s.attempt, LastError: s.lastErr}
		if s.state == StateRestarting && !s.retryAt.IsZero() {
			at := s.retryAt
			st.RetryAt = &at
		}
		if s.set != nil {
			st.Tools, st.Warnings = s.set.tools, slices.Clone(s.set.warnings)
		}
		if s.state == StateStarting {
			st.StartBudget = s.budget
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Close stops every server and waits for them, or for ctx. A Manager the
// host made is closed once every server it ever ran has ended (in the
// background if ctx ends first).
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	already := h.closed
	h.closed = true
	servers := make([]*server, 0, len(h.servers))
	for _, s := range h.servers {
		servers = append(servers, s)
	}
	all := h.ran
	h.mu.Unlock()
	h.cancel()
	var errs []error
	for _, s := range servers {
		if err := s.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if h.ownTrees && !already {
		closeTrees := func() {
			for _, s := range all {
				<-s.done
			}
			h.o.ProcessTrees.Close()
		}
		if len(errs) == 0 && allDone(all) {
			closeTrees()
		} else {
			go closeTrees()
		}
	}
	return errors.Join(errs...)
}

func allDone(servers []*server) bool {
	for _, s := range servers {
		select {
		case <-s.done:
		default:
			return false
		}
	}
	return true
}
