// Package servertools is the tool source of the VCP server's own tools
// (package bridge), offered on this machine as vcp_<ServerTool>. Their
// names come from the server's list, not from the owner's config, so the
// source never refuses a config: a server tool whose name a tool of this
// machine has is left out, and status says so.
package servertools

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// commitWait bounds how long a new list waits to be committed before the
// client says it is offered anyway (the node's rescan failed, say).
const commitWait = 20 * time.Second

// Source offers the tools of the server its client reaches.
type Source struct {
	client    *bridge.Client
	closed    chan struct{} // closed by Close: nothing waits for a commit then
	closeOnce sync.Once

	mu      sync.Mutex
	changed func() // the node's Relisted, from the first Prepare
	cfg     config.Config
	tools   []toolhost.Tool
	left    []string // warnings: the server tools left out at the last commit
	// lists counts the lists the client reported; settled is the count
	// the last pass that ended read: a commit took those lists in, or
	// the config was refused. ended is closed (and replaced) by each.
	lists, settled uint64
	ended          chan struct{}
}

// New makes the source and the client of the server's bridge; the session
// hands the client its frames (Client). listWait bounds the wait for the
// server's list (zero: bridge.DefaultListWait).
func New(log zerolog.Logger, listWait time.Duration) *Source {
	s := &Source{closed: make(chan struct{}), ended: make(chan struct{})}
	s.client = bridge.New(bridge.Options{Log: log, ListWait: listWait, OnChange: s.listChanged})
	return s
}

// Client is the bridge client the session and the control API use.
func (s *Source) Client() *bridge.Client { return s.client }

// listChanged tells the node the server's list changed and waits
// (bounded) until a pass over the sources prepared after the change
// ended: the client says the list is offered once this returns, and then
// its tools are registered (or the new tool set was refused, and the
// previous one stays, as the log says).
func (s *Source) listChanged() {
	s.mu.Lock()
	changed := s.changed
	s.lists++
	want := s.lists
	s.mu.Unlock()
	if changed == nil {
		return
	}
	changed()
	timeout := time.NewTimer(commitWait)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		done, next := s.settled >= want, s.ended
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-next:
		case <-timeout.C:
			return
		case <-s.closed:
			return
		}
	}
}

// Prepare readies the config's settings; the server's list is read at
// commit, so it claims no name and refuses nothing.
func (s *Source) Prepare(cfg config.Config, env toolsource.Env) (toolsource.Prepared, error) {
	s.mu.Lock()
	s.changed = env.Relisted
	lists := s.lists // what Commit reads from the client includes these
	s.mu.Unlock()
	return prepared{s: s, cfg: cfg, lists: lists}, nil
}

type prepared struct {
	s     *Source
	cfg   config.Config
	lists uint64
}

// end records that a pass which read lists ended, and wakes listChanged.
func (s *Source) end(lists uint64) {
	s.settled = max(s.settled, lists)
	close(s.ended)
	s.ended = make(chan struct{})
}

func (prepared) Specs() []toolhost.Spec { return nil }

// Discard ends the pass: the config was refused, the list waits for the
// next one.
func (p prepared) Discard() {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.end(p.lists)
}

// Commit takes the server's list as it is now, leaving out a tool whose
// name is taken by a tool of this machine (or by an earlier tool of the
// list).
func (p prepared) Commit(taken func(string) bool) []string {
	var tools []toolhost.Tool
	var left []string
	seen := map[string]bool{}
	for _, t := range p.s.client.Tools(p.cfg.Bridge.Timeout.D()) {
		name := t.Spec().Name
		if taken(name) || seen[name] {
			left = append(left, fmt.Sprintf("the server's tool %s is not offered: this machine has a tool of that name", name))
			continue
		}
		seen[name] = true
		tools = append(tools, t)
	}
	p.s.mu.Lock()
	p.s.cfg, p.s.tools, p.s.left = p.cfg, tools, left
	p.s.end(p.lists)
	p.s.mu.Unlock()
	return left
}

// Tools are the server's tools as last committed.
func (s *Source) Tools() []toolhost.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// Status is the server tools' line of the status.
func (s *Source) Status(st *controlapi.StatusResponse) {
	bs := s.client.Status()
	out := &controlapi.ServerToolsStatus{State: string(bs.State), Tools: bs.Tools, Message: bs.Message}
	s.mu.Lock()
	cfg := s.cfg
	out.Warnings = slices.Clone(s.left)
	s.mu.Unlock()
	for _, p := range s.client.Plugins() {
		if cfg.Bridge.Offers(p.Name) {
			out.Offered++
		}
	}
	st.ServerTools = out
}

// Close ends the calls waiting for the server and stops the client.
func (s *Source) Close(context.Context) error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.client.Close()
	return nil
}
