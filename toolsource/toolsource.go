// Package toolsource is the shape of a source of tools: one kind of tools
// the node offers (plugin folders, MCP servers, the server's own tools, a
// new one), driven by the node through one lifecycle. It sits below the
// node so that a source is its own package and need not import node.
package toolsource

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// A Source is one kind of tools, driven through one lifecycle: Prepare
// from the config, then Commit or Discard of what was prepared (a reload
// is all sources or none), Tools while in force, Status for `vcpnode
// status`, Close at the end (see "Adding a tool source" in
// docs/architecture.md).
type Source interface {
	// Prepare checks what cfg asks of the source and readies it without
	// starting or stopping anything: the reload it runs for may still be
	// refused, by this source or another. An error refuses the config.
	Prepare(cfg config.Config, env Env) (Prepared, error)
	// Tools are the tools the source offers now, as committed.
	Tools() []toolhost.Tool
	// Status adds the source's part to a status answer.
	Status(st *controlapi.StatusResponse)
	// Close stops whatever the source runs; the node calls it once, when
	// Run ends (or New fails), after the calls in flight were drained.
	Close(ctx context.Context) error
}

// Prepared is a source's part of a config about to be put in force.
type Prepared interface {
	// Specs are every tool the source may offer once committed whose name
	// the config decides: the node checks them against every other tool
	// before anything starts, and a clash refuses the config.
	Specs() []toolhost.Spec
	// Commit puts the prepared config in force (processes started,
	// restarted or stopped). It refuses nothing: what goes wrong is a
	// warning, and the tools that came up are Tools. taken says whether
	// a name is another tool's: a source whose tools are named from
	// outside the config (left out of Specs, so they never refuse the
	// owner's config) leaves out the ones whose names are taken, and
	// says so in a warning and its Status.
	Commit(taken func(name string) bool) (warnings []string)
	// Discard drops what Prepare readied: the config was refused.
	Discard()
}

// Ready is a Prepared some of whose tools exist before Commit and need no
// process (the file tool and the built-ins, the stdio plugins): the node
// checks and registers them as they are, their commands known. Specs
// include theirs, and Tools, after Commit, include them; the rest of the
// Specs (a direct plugin's, say) stand for tools that come with a process.
type Ready interface {
	Prepared
	Ready() []toolhost.Tool
}

// Env is what the node shares with its tool sources.
type Env struct {
	Log zerolog.Logger
	// Trees are the node's process trees and Sandbox its confinement:
	// every process a call starts runs in them.
	Trees   func() *proctree.Manager
	Sandbox *sandbox.Sandbox
	Getenv  func(string) string
	// Protected are files no tool may serve, whatever its roots: the
	// node's own (config, key, state).
	Protected []string
	// Changed tells the node the source's tools changed while in force (a
	// server came up, listed other tools): it prepares and commits every
	// source again, as a rescan does. It never blocks.
	Changed func()
	// Relisted tells the node the source's tools changed while in force
	// and nothing the config decides did (the server's new list): the
	// node prepares this source alone with the config in force, commits
	// it and registers the tools again, every other source left as it
	// is. Only for a change that leaves the source's Specs as they are
	// (should they differ, the node prepares and commits every source, as
	// for Changed). It never blocks.
	Relisted func()
}
