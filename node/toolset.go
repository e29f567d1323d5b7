package node

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolsource"
	"github.com/vcpnode/vcpnode/toolsource/builtins"
	"github.com/vcpnode/vcpnode/toolsource/mcpservers"
	"github.com/vcpnode/vcpnode/toolsource/plugins"
)

// ToolSet is what a config registers: the tools of the sources that need
// no process (the file tool and the built-ins, the stdio plugins), the
// caller's own tools, and a stand-in for each tool a process gives once it
// runs (the other sources' specs, one per MCP server; one per direct
// plugin that answers calls).
type ToolSet struct {
	// Tools exist without starting a process.
	Tools []toolhost.Tool
	// Pending stand for the tool sources' tools that come with a process;
	// they are never registered or called, only checked.
	Pending []toolhost.Tool
	// Known is every tool name the config may refer to, sorted.
	Known []string
}

// scannedFolders is what the node reads of the plugin folders' prepared
// part beyond the shape of every source: the static plugins feed the
// placeholders, a config may name a plugin that registers no tool, and
// what the scan found wrong is told with the config.
type scannedFolders interface {
	Static() []*plugin.StaticPlugin
	Unregistered() []string
	Warnings() []string
}

// CheckToolSet builds the tool set of cfg from scan (nil: no plugin
// folder) for `vcpnode config check`, as New and every reload build it:
// the sources whose tool names the config decides are prepared with cfg,
// starting nothing, and discarded.
func CheckToolSet(cfg config.Config, scan *plugin.Set) (ToolSet, error) {
	var prepared []toolsource.Prepared
	defer func() { discardSources(prepared) }()
	for _, src := range []toolsource.Source{builtins.New(), mcpservers.New()} {
		p, err := src.Prepare(cfg, toolsource.Env{})
		if err != nil {
			return ToolSet{}, err
		}
		prepared = append(prepared, p)
	}
	prepared = append(prepared, plugins.Scanned(scan))
	return buildToolSet(nil, prepared)
}

// buildToolSet builds the tool set from what the tool sources prepared
// and extra, starting nothing, and refuses two tools of one name, both
// sources named. New, every reload and `vcpnode config check` build it
// here, so that the check refuses exactly what `run` refuses.
func buildToolSet(extra []toolhost.Tool, sources []toolsource.Prepared) (ToolSet, error) {
	var ts ToolSet
	ts.Tools = append(readyTools(sources), extra...) // toolsource.go
	ts.Pending = sourceSpecs(sources)
	// The most the set can register: a server or a direct plugin that
	// does not come up only makes it smaller, which cannot clash.
	if err := toolhost.NewRegistry().Replace(ts.All()); err != nil {
		return ToolSet{}, fmt.Errorf("register tools: %w", err)
	}
	ts.Known = knownNames(ts, sources)
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

// plan is a whole configuration ready to be put in force: the settings,
// the checked tools, the plugin scan and its host, the MCP servers, the
// placeholder jobs. prepare builds it without touching what is in force
// and without starting or stopping a process; commit puts it in force.
type plan struct {
	st *settings
	// tools are the tools that exist without starting anything; the MCP
	// servers' and the direct plugins' tools are added once they run.
	tools   []toolhost.Tool
	sources []toolsource.Prepared // the tool sources' parts (toolsource.go)
	// taken are the names the plan's tools may have once everything runs:
	// the tools a source names from outside the config yield to them.
	taken    map[string]bool
	warnings []string
}

// prepare validates cfg and builds everything it implies, so that a bad
// config leaves the old one wholly in force. Every check that can refuse
// the config happens here, the registry's included: it is checked with
// the tools the plan will have once its MCP servers and direct plugins
// run. prepare starts and stops no process; commit does.
func (n *Node) prepare(cfg config.Config) (*plan, error) {
	if err := cfg.Validate(toolconfig.Check); err != nil {
		return nil, err
	}
	// The key file's content as of before the key is read: a change made
	// at any moment after this differs from it (hubsession.Settings).
	var keyFileSum [sha256.Size]byte
	if cfg.Hub.KeyFile != "" {
		keyFileSum = hubsession.FileSum(cfg.Hub.KeyFile)
	}
	key, err := cfg.Key(n.getenv)
	if err != nil {
		return nil, err
	}
	hubURL, err := config.HubURL(cfg.Hub.URL, key)
	if err != nil {
		return nil, err
	}
	name := cfg.Hub.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	st := &settings{Settings: hubsession.Settings{Config: cfg, HubURL: hubURL, Key: key, KeyFileSum: keyFileSum, Name: name}}
	sources, err := n.prepareSources(cfg) // toolsource.go
	if err != nil {
		return nil, err
	}
	pl := &plan{st: st, sources: sources}
	fail := func(err error) (*plan, error) {
		discardSources(sources)
		return nil, err
	}
	// The plugin scan feeds the placeholders too.
	var static []*plugin.StaticPlugin
	for _, p := range sources {
		if sf, ok := p.(scannedFolders); ok {
			static = append(static, sf.Static()...)
			pl.warnings = append(pl.warnings, sf.Warnings()...)
		}
	}
	jobs, warn, err := n.ph.Jobs(cfg, static)
	if err != nil {
		return fail(fmt.Errorf("placeholders: %w", err))
	}
	st.placeholderJobs = jobs
	pl.warnings = append(pl.warnings, warn...)
	ts, err := buildToolSet(n.extraTools, sources)
	if err != nil {
		return fail(err)
	}
	pl.taken = takenNames(ts.All())
	problems, warnings := ts.ConfigProblems(cfg)
	if len(problems) > 0 {
		return fail(errors.New(strings.Join(problems, "; ")))
	}
	// The config's own warnings too: run logs them, a reload reports them,
	// as config check prints them.
	pl.warnings = append(append(append(pl.warnings, toolconfig.Warnings(cfg)...), warnings...), ts.CommandWarnings(cfg)...)
	if err := checkWireNames(cfg, ts.All()); err != nil { // names.go
		return fail(err)
	}
	pl.tools = ts.Tools
	return pl, nil
}

// commit puts pl in force: the processes (MCP servers and direct plugins
// started, restarted and stopped), the plugin host and scan; then calls
// see the new tools and the new policy together (one swap in the
// dispatcher). Nothing here refuses the plan; what goes wrong is returned
// as warnings.
func (n *Node) commit(pl *plan) (warnings []string) {
	reg, warnings := n.start(pl)
	n.disp.Swap(reg, toolconfig.Policy(pl.st.Config))
	n.mu.Lock()
	n.cur = pl.st
	n.mu.Unlock()
	return warnings
}

// start runs what pl needs running and returns the registry of its tools.
// New calls it before the dispatcher exists; later, commit.
func (n *Node) start(pl *plan) (*toolhost.Registry, []string) {
	// The sources in their order: the MCP servers, which may wait for new
	// servers to list their tools, before the plugin folders, whose scan,
	// once published, should not wait long for its registry.
	warnings := commitSources(pl.sources, pl.taken)
	n.inForce = pl
	reg, more := n.register(pl)
	return reg, append(warnings, more...)
}

// register builds the registry of pl's tools and of the sources' tools as
// committed.
func (n *Node) register(pl *plan) (*toolhost.Registry, []string) {
	var warnings []string
	sourceTools, yielding := n.sourceTools(pl.sources, pl.taken)
	reg := toolhost.NewRegistry()
	local := append(slices.Clone(pl.tools), sourceTools...)
	if err := reg.Replace(local); err != nil {
		// prepare checked every name these tools can have; should one
		// still clash, the tools that exist without processes stay usable.
		warnings = append(warnings, fmt.Sprintf("register tools: %v; MCP servers and direct plugins are not offered until the next reload", err))
		local = pl.tools
		_ = reg.Replace(local)
	}
	// The tools named from outside the config (the server's own) last:
	// should they not register, this machine's stay.
	if len(yielding) > 0 {
		if err := reg.Replace(append(slices.Clone(local), yielding...)); err != nil {
			warnings = append(warnings, fmt.Sprintf("register tools: %v; the tools named from outside the config are not offered", err))
		}
	}
	return reg, warnings
}
