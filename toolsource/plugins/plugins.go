// Package plugins is the tool source of the VCP plugin folders ([plugins]
// dirs): the stdio plugins (toolhost/plugin) and the direct ones in
// Node.js hosts (toolhost/direct), their warm pools, the callback
// listener and the outbox of the asynchronous ones, the identity pins,
// and the watch that asks for a rescan when a folder changes.
package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/direct"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// How long Run waits at the end for the callback listener to finish a
// request it is receiving; the plugin hosts (stdio and Node.js) get
// plugin.CloseWait.
const callbackCloseWait = 2 * time.Second

// Source is what hosting plugin folders needs beyond one config: the
// plugin host (which owns every plugin process), the callback listener and
// the outbox for asynchronous results (opened the first time [plugins]
// dirs is set), and the list of folders to watch. It is closed once, when
// the node stops.
type Source struct {
	log    zerolog.Logger
	getenv func(string) string
	trees  func() *proctree.Manager // the node's
	// sandbox confines the processes of every host made (the node's).
	sandbox *sandbox.Sandbox
	// outboxReady wakes the connected session when a callback was stored.
	// It exists before the outbox, so a session never misses one.
	outboxReady chan struct{}
	// rescanned wakes the folder watcher after every scan: the folders to
	// watch may have changed.
	rescanned chan struct{}

	mu        sync.Mutex
	closed    bool
	box       *outbox.Box
	stateDir  string
	callbacks *plugin.CallbackServer
	pins      *plugin.Pins // each plugin folder's first-seen identity, in the state directory in force
	host      *plugin.Host
	hostOpts  hostSettings
	retired   []*plugin.Host // replaced by a reload; their async runs may still go on
	// prunedKills counts the kills of retired hosts closed once idle, so
	// that PluginKills never goes down.
	prunedKills uint64
	// prunedWarmCalls is the same for the calls warm interpreters ran.
	prunedWarmCalls uint64
	async           map[string]bool   // every asynchronous plugin seen: callbacks are taken for these
	hosted          map[string]string // manifest path → name of every plugin of the last scan
	static          []*plugin.StaticPlugin
	scanTools       []toolhost.Tool // the stdio plugins' tools, as last committed
	skipped         []Skipped       // what the last scan found but does not run as a tool
	changed         []string        // the last scan's identity changes, "NAME: what changed"
	dirs            []string        // the dirs of the last scan, for the watcher
	watch           bool
	// direct runs the Node.js hosts of direct plugins (service, hybridservice).
	direct      *direct.Host
	directDirs  map[string]bool // folders of the direct plugins of the last scan
	directTools []toolhost.Tool // the direct plugins' tools, as last committed
	// audit records a plugin whose identity changed (nil: not recorded).
	audit func(toolhost.CallRecord)
}

// hostSettings are the [plugins] settings a Host is built with; a reload
// that changes them makes a new Host.
type hostSettings struct {
	passEnv         string
	envFile         string
	maxOutputBytes  int
	asyncMaxRuntime time.Duration
}

// Options are what the source shares with the node.
type Options struct {
	Log    zerolog.Logger
	Getenv func(string) string
	// Trees are the node's process trees and Sandbox its confinement:
	// every plugin process runs in them.
	Trees   func() *proctree.Manager
	Sandbox *sandbox.Sandbox
	// Audit records a plugin whose manifest changed its identity (nil:
	// not recorded).
	Audit func(toolhost.CallRecord)
}

// New makes the source; it opens nothing until a config names plugin
// folders.
func New(o Options) *Source {
	return &Source{
		log:         o.Log,
		getenv:      o.Getenv,
		trees:       o.Trees,
		sandbox:     o.Sandbox,
		audit:       o.Audit,
		outboxReady: make(chan struct{}, 1),
		rescanned:   make(chan struct{}, 1),
		direct:      direct.NewHost(direct.Options{Log: o.Log, ProcessTrees: o.Trees(), Sandbox: o.Sandbox}),
	}
}

// OutboxReady is told (without blocking) each time a callback was stored:
// it wakes the connected session, and exists before the outbox, so a
// session never misses one.
func (rt *Source) OutboxReady() <-chan struct{} { return rt.outboxReady }

// checkNoneBroke fails when a plugin in use now has a manifest (or
// config.env) that no longer reads: a half-saved edit must not drop a
// working plugin and make the node reconnect without it. A plugin that was
// never loaded, or whose folder was removed, does not count.
func (rt *Source) checkNoneBroke(set *plugin.Set) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var broken []string
	for _, e := range set.Invalid {
		if name, ok := rt.hosted[e.Path]; ok {
			broken = append(broken, fmt.Sprintf("plugin %q, which is in use: %s", name, e.Reason))
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("plugins: %s; fix it, or rename the manifest to plugin-manifest.json.block to disable the plugin",
			strings.Join(broken, "; "))
	}
	return nil
}

// scanned records the outcome of a scan and wakes the watcher.
func (rt *Source) scanned(p config.PluginsConfig, set *plugin.Set, loaded direct.Loaded) {
	rt.mu.Lock()
	if rt.async == nil {
		rt.async = map[string]bool{}
	}
	hosted := map[string]string{}
	var static []*plugin.StaticPlugin
	var scanTools []toolhost.Tool
	if set != nil {
		scanTools = slices.Clone(set.Tools)
		for _, t := range set.Tools {
			spec := t.Spec()
			hosted[spec.Source] = spec.Name
			// Kept after a reload drops the plugin: a run started before may
			// still call back, and its result is still wanted.
			if set.IsAsync(spec.Name) {
				rt.async[spec.Name] = true
			}
		}
		for _, sp := range set.Static {
			hosted[sp.Source] = sp.Name
		}
		static = set.Static
	}
	directDirs := map[string]bool{}
	if set != nil {
		for _, d := range set.Direct {
			directDirs[d.Dir] = true
		}
	}
	for _, t := range loaded.Tools {
		hosted[t.Spec().Source] = t.Spec().Name
	}
	for _, e := range loaded.Services {
		hosted[e.Path] = e.Name
	}
	rt.hosted, rt.static, rt.scanTools = hosted, static, scanTools
	rt.skipped = append(skippedPlugins(set), skippedDirect(loaded)...)
	rt.changed = nil
	if set != nil {
		for _, e := range set.Changed {
			rt.changed = append(rt.changed, e.Name+": "+e.Reason)
		}
	}
	rt.directDirs = directDirs
	rt.dirs, rt.watch = slices.Clone(p.Dirs), p.Watch
	rt.mu.Unlock()
	select {
	case rt.rescanned <- struct{}{}:
	default:
	}
}

// isKnown says whether a callback names an asynchronous plugin this node hosts or hosted.
func (rt *Source) isKnown(name string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.async[name]
}

// Outbox is where the asynchronous plugins' results wait to be sent; nil
// until plugins were configured.
func (rt *Source) Outbox() *outbox.Box {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.box
}

// watchTargets is the plugin dirs to watch, or nil when watching is off.
func (rt *Source) watchTargets() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.watch {
		return nil
	}
	return slices.Clone(rt.dirs)
}

// shut stops every plugin process (the asynchronous ones still working
// too), then the callback listener. Later scans fail.
func (rt *Source) shut() {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return
	}
	rt.closed = true
	hosts := append(slices.Clone(rt.retired), rt.host)
	callbacks, box := rt.callbacks, rt.box
	rt.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), plugin.CloseWait)
	defer cancel()
	for _, h := range hosts {
		if h == nil {
			continue
		}
		if err := h.Close(ctx); err != nil {
			rt.log.Warn().Err(err).Msg("some plugin processes did not stop")
		}
	}
	if err := rt.direct.Close(ctx); err != nil {
		rt.log.Warn().Err(err).Msg("some Node.js plugin hosts did not stop")
	}
	if callbacks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), callbackCloseWait)
		defer cancel()
		if err := callbacks.Close(ctx); err != nil {
			rt.log.Warn().Err(err).Msg("callback listener did not close cleanly")
		}
	}
	// Last: the listener is closed, so nothing more can be stored.
	if box != nil {
		box.Close()
	}
}

// Skipped is a plugin folder the last scan found but does not offer as
// a tool, and why: `vcpnode tools --all` lists them beside the tools.
type Skipped struct {
	Name, Type, Path string
	// Kind is "static", "service" (a direct service plugin, running),
	// "unsupported", "invalid", "duplicate" or "disabled".
	Kind   string
	Reason string
}

func skippedPlugins(set *plugin.Set) []Skipped {
	if set == nil {
		return nil
	}
	var out []Skipped
	for _, sp := range set.Static {
		out = append(out, Skipped{Name: sp.Name, Type: "static", Path: sp.Source, Kind: "static",
			Reason: "static plugins feed {{placeholders}} and are never registered as tools"})
	}
	for _, group := range []struct {
		kind    string
		entries []plugin.Entry
	}{{"unsupported", set.Unsupported}, {"invalid", set.Invalid}, {"duplicate", set.Duplicates}, {"disabled", set.Disabled}} {
		for _, e := range group.entries {
			out = append(out, Skipped{Name: e.Name, Type: e.Type, Path: e.Path, Kind: group.kind, Reason: e.Reason})
		}
	}
	return out
}

// Skipped lists what the last scan found and does not run as a tool.
func (rt *Source) Skipped() []Skipped {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.skipped)
}

// Changes are the last scan's plugins whose manifest changed their
// identity since their folder was first seen, "NAME: what changed".
func (rt *Source) Changes() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.changed)
}

// Static are the static plugins of the last scan, for the placeholder
// refresher.
func (rt *Source) Static() []*plugin.StaticPlugin {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.static)
}

// Processes is how many plugin processes run a call, asynchronous ones
// still working after their answer included; warm interpreters waiting
// for a call are not counted (Status has them).
func (rt *Source) Processes() int {
	rt.mu.Lock()
	hosts := append(slices.Clone(rt.retired), rt.host)
	rt.mu.Unlock()
	total := rt.direct.Running()
	for _, h := range hosts {
		if h != nil {
			total += h.Calls()
		}
	}
	return total
}

// status counts the calls running and lists the warm pools (only the
// current host has any: a reload drops the pools of the host it retires).
func (rt *Source) status() controlapi.PluginsStatus {
	st := controlapi.PluginsStatus{Calls: rt.Processes(), WarmCalls: rt.WarmCalls()}
	rt.mu.Lock()
	h := rt.host
	rt.mu.Unlock()
	if h == nil {
		return st
	}
	for _, p := range h.WarmPools() {
		st.WarmWaiting += p.Waiting
		st.Warm = append(st.Warm, controlapi.WarmPoolStatus{Plugin: p.Plugin, Waiting: p.Waiting, Size: p.Size, Cold: p.Cold})
	}
	return st
}

// WarmCalls is how many calls warm interpreters ran, over every plugin
// host this source had.
func (rt *Source) WarmCalls() uint64 {
	rt.mu.Lock()
	hosts := append(slices.Clone(rt.retired), rt.host)
	total := rt.prunedWarmCalls
	rt.mu.Unlock()
	for _, h := range hosts {
		if h != nil {
			total += h.WarmCalls()
		}
	}
	return total
}

// WarmWaiting is how many warm interpreters wait for a call.
func (rt *Source) WarmWaiting() int {
	rt.mu.Lock()
	h := rt.host
	rt.mu.Unlock()
	if h == nil {
		return 0
	}
	return h.WarmWaiting()
}

// Kills is how many plugin processes were killed (timeout, cancel,
// shutdown, async runtime cap), over every plugin host this source had.
func (rt *Source) Kills() uint64 {
	// The hosts and the tally of pruned ones in one step: pruneRetired
	// moves a host's kills into the tally and drops it under the same lock.
	rt.mu.Lock()
	hosts := append(slices.Clone(rt.retired), rt.host)
	total := rt.direct.Kills() + rt.prunedKills
	rt.mu.Unlock()
	for _, h := range hosts {
		if h != nil {
			total += h.Kills()
		}
	}
	return total
}

// Restarts is how many times a direct plugin's Node.js host was started
// again after it went away.
func (rt *Source) Restarts() uint64 { return rt.direct.Restarts() }

// CallbackURL is the URL a run of the asynchronous plugin name is given
// to post its result to; "" until plugins were configured.
func (rt *Source) CallbackURL(name string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.callbacks == nil {
		return ""
	}
	return rt.callbacks.Grant(name).URL()
}
