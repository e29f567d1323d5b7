package plugins

import (
	"context"
	"slices"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolsource"
)

// The plugin folders are a tool source (toolsource.Source) like the
// others. Their prepared part is a toolsource.Ready (the stdio plugins'
// tools exist without a process; the direct plugins that answer calls
// are Specs too); the node also reads the static plugins (placeholders),
// the names of plugins that register no tool (a config may name them)
// and the scan's warnings.

// Prepare scans the folders of cfg (prepare); it starts no process.
func (rt *Source) Prepare(cfg config.Config, _ toolsource.Env) (toolsource.Prepared, error) {
	pp, err := rt.prepare(cfg)
	if err != nil {
		return nil, err
	}
	return pp, nil
}

// Tools are the tools of the last commit: the stdio plugins' and the
// direct plugins' that loaded.
func (rt *Source) Tools() []toolhost.Tool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append(slices.Clone(rt.scanTools), rt.directTools...)
}

// Status is the plugins' part of the status: identity changes and the
// processes and warm pools.
func (rt *Source) Status(st *controlapi.StatusResponse) {
	rt.mu.Lock()
	st.PluginChanges = slices.Clone(rt.changed)
	rt.mu.Unlock()
	st.Plugins = rt.status()
}

// Close stops every plugin process and the callback listener.
func (rt *Source) Close(context.Context) error {
	rt.shut()
	return nil
}

// scanParts is what a scan of the plugin folders tells before anything
// runs; set is nil when no folder is configured.
type scanParts struct {
	set      *plugin.Set
	warnings []string
}

// Ready are the stdio plugins' tools: they exist without a process.
func (s scanParts) Ready() []toolhost.Tool {
	if s.set == nil {
		return nil
	}
	return slices.Clone(s.set.Tools)
}

// Specs are the stdio plugins' tools and the direct plugins that answer
// calls, whose tools exist once their Node.js host loaded them.
func (s scanParts) Specs() []toolhost.Spec {
	if s.set == nil {
		return nil
	}
	var out []toolhost.Spec
	for _, t := range s.set.Tools {
		out = append(out, t.Spec())
	}
	for _, p := range s.set.Direct {
		if p.Answers() {
			out = append(out, p.Spec)
		}
	}
	return out
}

// Static are the static plugins, which feed placeholders.
func (s scanParts) Static() []*plugin.StaticPlugin {
	if s.set == nil {
		return nil
	}
	return s.set.Static
}

// Unregistered are the names of plugins that register no tool but that a
// config may name: static, disabled, unsupported, every direct plugin.
func (s scanParts) Unregistered() []string {
	if s.set == nil {
		return nil
	}
	var names []string
	for _, d := range s.set.Direct {
		names = append(names, d.Name)
	}
	for _, sp := range s.set.Static {
		names = append(names, sp.Name)
	}
	for _, group := range [][]plugin.Entry{s.set.Disabled, s.set.Unsupported} {
		for _, e := range group {
			if e.Name != "" {
				names = append(names, e.Name)
			}
		}
	}
	return names
}

// Warnings are what the scan found wrong, told with the config.
func (s scanParts) Warnings() []string { return s.warnings }

// Scanned is a scan made elsewhere (`vcpnode config check`, set nil when
// no folder is configured) as a prepared part, for the tool set's checks:
// it starts nothing, so Commit and Discard do nothing.
func Scanned(set *plugin.Set) toolsource.Prepared {
	return checkedScan{scanParts{set: set}}
}

type checkedScan struct{ scanParts }

func (checkedScan) Commit(func(string) bool) []string { return nil }

func (checkedScan) Discard() {}

// Commit puts the scan in force (commit), audits the plugins whose
// identity changed, and keeps the direct plugins' tools for Tools.
func (pp *plan) Commit(func(string) bool) []string {
	rt := pp.rt
	tools, warnings := rt.commit(pp)
	rt.mu.Lock()
	rt.directTools = tools
	audit := rt.audit
	rt.mu.Unlock()
	if pp.set != nil && audit != nil {
		for _, e := range pp.set.Changed {
			audit(toolhost.CallRecord{Tool: e.Name, Outcome: "manifest changed", Error: e.Reason, Finished: time.Now()})
		}
	}
	return warnings
}

// Discard undoes what preparing the scan opened (discard).
func (pp *plan) Discard() { pp.rt.discard(pp) }
