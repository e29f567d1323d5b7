package node

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// WithToolSource adds a source of tools (toolsource.Source); the node
// prepares it with every config it takes, at New and on every reload.
func WithToolSource(src toolsource.Source) Option {
	return func(n *Node) { n.sources = append(n.sources, src) }
}

// toolEnv is what the node gives its sources to prepare cfg with.
func (n *Node) toolEnv(cfg config.Config) toolsource.Env {
	// The node's own files are never read or written, even inside a root.
	deny := cfg.OwnFiles("", n.getenv, os.Geteuid())
	for _, p := range n.protected {
		if p != "" {
			deny = append(deny, p)
		}
	}
	return toolsource.Env{Log: n.log, Trees: n.trees.Get, Sandbox: n.sandbox, Getenv: n.getenv, Changed: n.sourcesChanged, Protected: deny}
}

// prepareSources prepares every source with cfg; on an error it discards
// what the others prepared.
func (n *Node) prepareSources(cfg config.Config) ([]toolsource.Prepared, error) {
	prepared := make([]toolsource.Prepared, 0, len(n.sources))
	env := n.toolEnv(cfg)
	for _, src := range n.sources {
		env.Relisted = func() { n.sourceRelisted(src) } // mcp.go
		p, err := src.Prepare(cfg, env)
		if err != nil {
			discardSources(prepared)
			return nil, err
		}
		prepared = append(prepared, p)
	}
	return prepared, nil
}

func discardSources(prepared []toolsource.Prepared) {
	for _, p := range prepared {
		p.Discard()
	}
}

// sourceSpecs stand for the tools the prepared sources may offer once
// their processes run, for the tool set's name check; a Ready source's
// ready tools are in readyTools.
func sourceSpecs(prepared []toolsource.Prepared) []toolhost.Tool {
	var out []toolhost.Tool
	for _, p := range prepared {
		ready := readyNames(p)
		for _, s := range p.Specs() {
			if !ready[s.Name] {
				out = append(out, pendingTool{s})
			}
		}
	}
	return out
}

// readyNames are the names of p's tools that exist before Commit (none
// unless p is a toolsource.Ready).
func readyNames(p toolsource.Prepared) map[string]bool {
	r, ok := p.(toolsource.Ready)
	if !ok {
		return nil
	}
	return takenNames(r.Ready())
}

// readyTools are the tools of the prepared sources that need no process.
func readyTools(prepared []toolsource.Prepared) []toolhost.Tool {
	var out []toolhost.Tool
	for _, p := range prepared {
		if r, ok := p.(toolsource.Ready); ok {
			out = append(out, r.Ready()...)
		}
	}
	return out
}

// commitSources commits what the sources prepared.
func commitSources(prepared []toolsource.Prepared, taken map[string]bool) (warnings []string) {
	isTaken := func(name string) bool { return taken[name] }
	for _, p := range prepared {
		warnings = append(warnings, p.Commit(isTaken)...)
	}
	return warnings
}

// sourceTools are the tools of the sources committed with prepared (in
// the order of n.sources), but for the ready ones, which are in the
// plan's tools since prepare: claimed are the ones their Specs named,
// yielding the ones named from outside the config, which each source
// checked against taken.
func (n *Node) sourceTools(prepared []toolsource.Prepared, taken map[string]bool) (claimed, yielding []toolhost.Tool) {
	for i, src := range n.sources {
		ready := readyNames(prepared[i])
		for _, t := range src.Tools() {
			if ready[t.Spec().Name] {
				continue
			}
			if taken[t.Spec().Name] {
				claimed = append(claimed, t)
			} else {
				yielding = append(yielding, t)
			}
		}
	}
	return claimed, yielding
}

// takenNames are the names of every tool in tools.
func takenNames(tools []toolhost.Tool) map[string]bool {
	out := make(map[string]bool, len(tools))
	for _, t := range tools {
		out[t.Spec().Name] = true
	}
	return out
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
