package node

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/builtin"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// ToolSet is what a config registers: the file tool and the built-ins,
// the plugins of a scan of its folders, the caller's own tools, and a
// stand-in for each tool a process gives once it runs (one per MCP server,
// one per direct plugin that answers calls).
type ToolSet struct {
	// Tools exist without starting a process.
	Tools []toolhost.Tool
	// Pending stand for the MCP servers' and direct plugins' tools; they
	// are never registered or called, only checked.
	Pending []toolhost.Tool
	// Servers are the [mcp.servers] tables as the MCP host takes them.
	Servers []mcp.ServerConfig
}

// BuildToolSet builds the tool set of cfg from scan (nil: no plugin folder)
// and extra, starting nothing, and refuses what the node refuses: MCP
// servers that cannot be applied, or two tools of one name, both sources
// named. New, every reload and `vcpnode config check` build it here, so
// that the check refuses exactly what `run` refuses. deny are files the
// file tools never serve.
func BuildToolSet(cfg config.Config, scan *plugin.Set, deny []string, extra []toolhost.Tool) (ToolSet, error) {
	ts := ToolSet{Servers: serverConfigs(cfg)}
	if len(ts.Servers) > 0 {
		if err := mcp.Check(ts.Servers); err != nil {
			return ToolSet{}, fmt.Errorf("mcp: %w", err)
		}
	}
	fileOpts := files.Options{Roots: cfg.Files.Roots, MaxBytes: cfg.Files.MaxBytes, Deny: deny}
	ts.Tools = append([]toolhost.Tool{files.NewTool(fileOpts)}, builtin.New(files.NewAccess(fileOpts), cfg.Files.WriteMaxBytes)...)
	if scan != nil {
		ts.Tools = append(ts.Tools, scan.Tools...)
	}
	ts.Tools = append(ts.Tools, extra...)
	for _, c := range ts.Servers {
		ts.Pending = append(ts.Pending, pendingTool{toolhost.Spec{Name: c.ToolName(), Source: "mcp:" + c.Name}})
	}
	if scan != nil {
		for _, p := range scan.Direct {
			if p.Answers() {
				ts.Pending = append(ts.Pending, pendingTool{p.Spec})
			}
		}
	}
	// The most the set can register: a server or a direct plugin that
	// does not come up only makes it smaller, which cannot clash.
	if err := toolhost.NewRegistry().Replace(ts.All()); err != nil {
		return ToolSet{}, fmt.Errorf("register tools: %w", err)
	}
	return ts, nil
}

// All is every tool of the set, the pending ones included.
func (ts ToolSet) All() []toolhost.Tool {
	return append(slices.Clone(ts.Tools), ts.Pending...)
}

// pendingTool stands for a tool that exists once its process runs, so
// that the set can be checked before anything starts.
type pendingTool struct{ spec toolhost.Spec }

func (t pendingTool) Spec() toolhost.Spec { return t.spec }

func (t pendingTool) Invoke(context.Context, toolhost.Call) (any, error) {
	return nil, errors.New("not started") // never registered, never called
}
