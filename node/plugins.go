package node

import (
	"context"
	"sync"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolsource/plugins"
)

// The plugin folders are a tool source (toolsource/plugins) like the
// others; the node starts their folder watcher with Run and answers for
// them in status, metrics and `tools --all`.

// SkippedPlugin is a plugin folder the last scan found but does not offer
// as a tool, and why.
type SkippedPlugin = plugins.Skipped

// SkippedPlugins lists what the last plugin scan found and does not run as a tool.
func (n *Node) SkippedPlugins() []SkippedPlugin { return n.plugins.Skipped() }

// PluginChanges are the last scan's plugins whose manifest changed their
// identity since their folder was first seen.
func (n *Node) PluginChanges() []string { return n.plugins.Changes() }

// StaticPlugins are the static plugins of the last scan, for the
// placeholder refresher.
func (n *Node) StaticPlugins() []*plugin.StaticPlugin { return n.plugins.Static() }

// PluginProcesses is how many plugin processes run a call, asynchronous
// ones still working after their answer included; warm interpreters
// waiting for a call are not counted (the status's plugins section has them).
func (n *Node) PluginProcesses() int { return n.plugins.Processes() }

// PluginWarmCalls is how many calls warm interpreters ran, over every
// plugin host this node had.
func (n *Node) PluginWarmCalls() uint64 { return n.plugins.WarmCalls() }

// PluginWarmWaiting is how many warm interpreters wait for a call.
func (n *Node) PluginWarmWaiting() int { return n.plugins.WarmWaiting() }

// PluginKills is how many plugin processes were killed (timeout, cancel,
// shutdown, async runtime cap), over every plugin host this node had.
func (n *Node) PluginKills() uint64 { return n.plugins.Kills() }

// OutboxWaiting is how many asynchronous results wait to be sent.
func (n *Node) OutboxWaiting() int { return n.plugins.Outbox().Waiting() }

// startPlugins starts the folder watcher; the returned function, called when
// Run ends, stops it. The plugin processes stop with the other sources.
func (n *Node) startPlugins(ctx context.Context) (stop func()) {
	watchCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		n.guard("plugin watcher", func() { n.plugins.Watch(watchCtx, n.rescanPlugins) })
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// rescanPlugins is the watcher's rescan: the config in force again.
func (n *Node) rescanPlugins() {
	rep, err := n.Rescan()
	if err != nil {
		n.log.Warn().Err(err).Msg("plugin folders changed, but the new plugin set could not be used; the previous one stays in force")
		return
	}
	n.log.Info().Bool("reconnect", rep.Reconnected).Int("warnings", len(rep.Warnings)).Msg("plugin folders changed; plugins rescanned")
}

// auditRecord writes r to the audit file; New's first commit comes before
// the audit file is open, and writes nothing.
func (n *Node) auditRecord(r toolhost.CallRecord) {
	if n.tel != nil {
		n.tel.audit.Record(r)
	}
}
