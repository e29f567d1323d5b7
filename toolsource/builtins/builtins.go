// Package builtins is the tool source of the tools every node has without
// a process: the file tool (internal_request_file, toolhost/files) and the
// workspace built-ins (toolhost/builtin), under the [files] table.
package builtins

import (
	"context"
	"slices"
	"sync"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/builtin"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolsource"
)

// Source offers the file tool and the workspace built-ins.
type Source struct {
	mu    sync.Mutex
	tools []toolhost.Tool
}

// New makes the source.
func New() *Source { return &Source{} }

// Prepare makes the tools for cfg's roots and limits, never serving the
// files env protects; they need no process, so they are ready at once
// (toolsource.Ready).
func (s *Source) Prepare(cfg config.Config, env toolsource.Env) (toolsource.Prepared, error) {
	opts := files.Options{Roots: cfg.Files.Roots, MaxBytes: cfg.Files.MaxBytes, Deny: env.Protected}
	tools := append([]toolhost.Tool{files.NewTool(opts)}, builtin.New(files.NewAccess(opts), cfg.Files.WriteMaxBytes)...)
	return prepared{s: s, tools: tools}, nil
}

type prepared struct {
	s     *Source
	tools []toolhost.Tool
}

func (p prepared) Ready() []toolhost.Tool { return p.tools }

func (p prepared) Specs() []toolhost.Spec {
	out := make([]toolhost.Spec, len(p.tools))
	for i, t := range p.tools {
		out[i] = t.Spec()
	}
	return out
}

func (p prepared) Commit(func(string) bool) []string {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.tools = p.tools
	return nil
}

func (prepared) Discard() {}

// Tools are the tools as last committed.
func (s *Source) Tools() []toolhost.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// Status adds nothing: the tools are counted with the others.
func (*Source) Status(*controlapi.StatusResponse) {}

// Close has nothing to stop.
func (*Source) Close(context.Context) error { return nil }
