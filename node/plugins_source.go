package node

import (
	"context"
	"slices"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// The plugin folders are a tool source (toolsource.Source) like the
// others: prepared, committed or discarded, and closed through the same
// loop. Their scan also feeds the tool set (the stdio plugins' tools, the
// names of the direct plugins that answer calls, the names a config may
// refer to) and the static plugins' placeholders, so the node reads the
// prepared scan (pluginPlanOf); their Specs are therefore empty.

// Prepare scans the folders of cfg (prepare); it starts no process.
func (rt *pluginRuntime) Prepare(cfg config.Config, _ toolsource.Env) (toolsource.Prepared, error) {
	pp, err := rt.prepare(cfg)
	if err != nil {
		return nil, err
	}
	return pp, nil
}

// Tools are the direct plugins' tools loaded by the last commit; the stdio
// plugins' are in the tool set, since they exist without a process.
func (rt *pluginRuntime) Tools() []toolhost.Tool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.directTools)
}

// Status is the plugins' part of the status: identity changes and the
// processes and warm pools.
func (rt *pluginRuntime) Status(st *controlapi.StatusResponse) {
	rt.mu.Lock()
	st.PluginChanges = slices.Clone(rt.changed)
	rt.mu.Unlock()
	st.Plugins = rt.status()
}

// Close stops every plugin process and the callback listener (close).
func (rt *pluginRuntime) Close(context.Context) error {
	rt.close()
	return nil
}

// Specs are empty: the node checks the scan's tools through the tool set.
func (pp *pluginPlan) Specs() []toolhost.Spec { return nil }

// Commit puts the scan in force (commit), audits the plugins whose
// identity changed, and keeps the direct plugins' tools for Tools.
func (pp *pluginPlan) Commit(func(string) bool) []string {
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
func (pp *pluginPlan) Discard() { pp.rt.discard(pp) }

// pluginPlanOf is the plugin folders' part among what the sources prepared.
func pluginPlanOf(prepared []toolsource.Prepared) *pluginPlan {
	for _, p := range prepared {
		if pp, ok := p.(*pluginPlan); ok {
			return pp
		}
	}
	return nil
}

// auditRecord writes r to the audit file; New's first commit comes before
// the audit file is open, and writes nothing.
func (n *Node) auditRecord(r toolhost.CallRecord) {
	if n.tel != nil {
		n.tel.audit.Record(r)
	}
}
