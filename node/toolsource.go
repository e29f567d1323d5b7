package node

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// A ToolSource is one kind of tools the node offers, driven through one
// lifecycle: Prepare from the config, then Commit or Discard of what was
// prepared (a reload is all sources or none), Tools while in force,
// Status for `vcpnode status`, Close at the end. A source is its own
// package; the composition adds it with WithToolSource (see "Adding a
// tool source" in docs/architecture.md).
type ToolSource interface {
	// Prepare checks what cfg asks of the source and readies it without
	// starting or stopping anything: the reload it runs for may still be
	// refused, by this source or another. An error refuses the config.
	Prepare(cfg config.Config, env ToolEnv) (PreparedTools, error)
	// Tools are the tools the source offers now, as committed.
	Tools() []toolhost.Tool
	// Status adds the source's part to a status answer.
	Status(st *controlapi.StatusResponse)
	// Close stops whatever the source runs; the node calls it once, when
	// Run ends (or New fails), after the calls in flight were drained.
	Close(ctx context.Context) error
}

// PreparedTools is a source's part of a config about to be put in force.
type PreparedTools interface {
	// Specs are every tool the source may offer once committed: the node
	// checks their names against every other tool before anything starts.
	Specs() []toolhost.Spec
	// Commit puts the prepared config in force (processes started,
	// restarted or stopped). It refuses nothing: what goes wrong is a
	// warning, and the tools that came up are Tools.
	Commit() (warnings []string)
	// Discard drops what Prepare readied: the config was refused.
	Discard()
}

// ToolEnv is what the node shares with its tool sources.
type ToolEnv struct {
	Log zerolog.Logger
	// Trees are the node's process trees and Sandbox its confinement:
	// every process a call starts runs in them.
	Trees   func() *proctree.Manager
	Sandbox *sandbox.Sandbox
	Getenv  func(string) string
	// Changed tells the node the source's tools changed while in force (a
	// server came up, listed other tools): it prepares and commits every
	// source again, as a rescan does. It never blocks.
	Changed func()
}

// WithToolSource adds a source of tools; the node prepares it with every
// config it takes, at New and on every reload.
func WithToolSource(src ToolSource) Option {
	return func(n *Node) { n.sources = append(n.sources, src) }
}

// toolEnv is the ToolEnv the node gives its sources.
func (n *Node) toolEnv() ToolEnv {
	return ToolEnv{Log: n.log, Trees: n.trees.Get, Sandbox: n.sandbox, Getenv: n.getenv, Changed: n.mcp.signalChange}
}

// prepareSources prepares every source with cfg; on an error it discards
// what the others prepared.
func (n *Node) prepareSources(cfg config.Config) ([]PreparedTools, error) {
	prepared := make([]PreparedTools, 0, len(n.sources))
	env := n.toolEnv()
	for _, src := range n.sources {
		p, err := src.Prepare(cfg, env)
		if err != nil {
			discardSources(prepared)
			return nil, err
		}
		prepared = append(prepared, p)
	}
	return prepared, nil
}

func discardSources(prepared []PreparedTools) {
	for _, p := range prepared {
		p.Discard()
	}
}

// sourceSpecs stand for the tools the prepared sources may offer, for the
// tool set's name check.
func sourceSpecs(prepared []PreparedTools) []toolhost.Tool {
	var out []toolhost.Tool
	for _, p := range prepared {
		for _, s := range p.Specs() {
			out = append(out, pendingTool{s})
		}
	}
	return out
}

// commitSources commits what the sources prepared and returns their tools.
func (n *Node) commitSources(prepared []PreparedTools) (tools []toolhost.Tool, warnings []string) {
	for _, p := range prepared {
		warnings = append(warnings, p.Commit()...)
	}
	for _, src := range n.sources {
		tools = append(tools, src.Tools()...)
	}
	return tools, warnings
}

// sourcesStatus adds every source's part to st.
func (n *Node) sourcesStatus(st *controlapi.StatusResponse) {
	for _, src := range n.sources {
		src.Status(st)
	}
}

// sourceCloseWait bounds the close of every source together.
const sourceCloseWait = 10 * time.Second

// closeSources closes every source, each once.
func (n *Node) closeSources() {
	ctx, cancel := context.WithTimeout(context.Background(), sourceCloseWait)
	defer cancel()
	for _, src := range n.sources {
		if err := src.Close(ctx); err != nil {
			n.log.Warn().Err(fmt.Errorf("close a tool source: %w", err)).Msg("a tool source did not stop cleanly")
		}
	}
}
