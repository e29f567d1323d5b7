package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"path/filepath"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/direct"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// plan is a scan of the plugin folders and the host to run it with,
// built without touching what is in force and without starting a
// process: commit puts it in force (and loads the direct plugins),
// discard undoes the little that preparing it had to do.
type plan struct {
	scanParts
	rt       *Source
	p        config.PluginsConfig
	host     *plugin.Host
	hostOpts hostSettings
	newHost  bool // host was made for this plan and is not in force yet
	opened   bool // the outbox and callback listener were opened for this plan
	// moveTo is the outbox of a new state directory, open (and locked)
	// but not in force: commit moves the callbacks into it.
	moveTo  *outbox.Box
	moveDir string

	direct directLoad // what the direct plugins are loaded with at commit
}

// directLoad is what the direct plugin host is loaded with.
type directLoad struct {
	plugins []*plugin.DirectPlugin
	cfg     config.Config
}

// prepare scans the folders of cfg with the host its settings call for
// (a new one when they changed, not yet in force) and checks that no
// plugin in use broke. Only the first configuration of plugins, and a new
// state directory, open something (the outbox under the state directory,
// and the first time the callback listener); discard closes them again.
func (rt *Source) prepare(cfg config.Config) (*plan, error) {
	p := cfg.Plugins
	pp := &plan{rt: rt, p: p, direct: directLoad{cfg: cfg}}
	if len(p.Dirs) == 0 {
		return pp, nil
	}
	if err := rt.openShared(pp); err != nil {
		return nil, err
	}
	if err := rt.pickHost(pp); err != nil {
		rt.discard(pp)
		return nil, err
	}
	set, err := pp.host.Scan(p.Dirs)
	if err != nil {
		rt.discard(pp)
		return nil, fmt.Errorf("plugins: %w", err)
	}
	if err := rt.checkNoneBroke(set); err != nil {
		rt.discard(pp)
		return nil, err
	}
	pp.set = set
	pp.direct.plugins = set.Direct
	pp.warnings = append(pp.warnings, set.Warnings()...)
	return pp, nil
}

// openShared makes the parts every host shares the first time plugins are
// configured: the outbox (which locks the state directory) and the
// callback listener.
func (rt *Source) openShared(pp *plan) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return fmt.Errorf("plugins: %w", plugin.ErrClosed)
	}
	stateDir, err := pp.p.StateDirectory(rt.getenv, os.Geteuid())
	if err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	if rt.box != nil {
		if stateDir != rt.stateDir {
			// Opened (and locked) now, so that a state directory that
			// cannot be used refuses the reload.
			box, err := outbox.Open(stateDir, rt.outboxReady, rt.log)
			if err != nil {
				return fmt.Errorf("plugins: %w", err)
			}
			if _, err := plugin.OpenPins(stateDir); err != nil { // the pins move too
				box.Close()
				return fmt.Errorf("plugins: %w", err)
			}
			pp.moveTo, pp.moveDir = box, stateDir
		}
		return nil
	}
	box, err := outbox.Open(stateDir, rt.outboxReady, rt.log)
	if err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	pins, err := plugin.OpenPins(stateDir)
	if err != nil {
		box.Close()
		return fmt.Errorf("plugins: %w", err)
	}
	cb, err := plugin.NewCallbackServer(currentOutbox{rt}, rt.isKnown, rt.log)
	if err != nil {
		box.Close()
		return fmt.Errorf("plugins: %w", err)
	}
	rt.box, rt.stateDir, rt.callbacks, rt.pins = box, stateDir, cb, pins
	pp.opened = true
	rt.log.Debug().Str("state_dir", stateDir).Msg("asynchronous plugin results are kept under the state directory until sent")
	return nil
}

// moveOutbox puts the outbox of a new state directory in force, with every
// callback of the old one moved into it (outbox.Box.MoveTo), and releases
// the old state directory. Callbacks stored meanwhile go through the old
// outbox into the new one.
func (rt *Source) moveOutbox(box *outbox.Box, stateDir string) {
	rt.mu.Lock()
	old, oldDir := rt.box, rt.stateDir
	rt.mu.Unlock()
	moved, err := old.MoveTo(box)
	rt.mu.Lock()
	rt.box, rt.stateDir = box, stateDir
	rt.mu.Unlock()
	old.Close()
	if perr := rt.pins.MoveTo(stateDir); perr != nil {
		rt.log.Error().Err(perr).Str("from", oldDir).Str("to", stateDir).Msg("the plugin identities stay in the old state directory")
	}
	if err != nil {
		rt.log.Error().Err(err).Str("from", oldDir).Str("to", stateDir).
			Msg("some asynchronous results could not be moved to the new state directory; they stay in the old one")
	}
	rt.log.Info().Int("callbacks", moved).Str("from", oldDir).Str("to", stateDir).Msg("the outbox moved to the new state directory")
}

// currentOutbox stores a callback in the outbox in force.
type currentOutbox struct{ rt *Source }

func (c currentOutbox) Deliver(ctx context.Context, pluginName, taskID string, body json.RawMessage) error {
	return c.rt.Outbox().Deliver(ctx, pluginName, taskID, body)
}

// pickHost chooses the host in force, or makes a new one when the settings
// hosts are made with changed.
func (rt *Source) pickHost(pp *plan) error {
	p := pp.p
	want := hostSettings{
		passEnv:         fmt.Sprint(p.PassEnv),
		envFile:         p.EnvFile,
		maxOutputBytes:  p.MaxOutputBytes,
		asyncMaxRuntime: p.AsyncMaxRuntime.D(),
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	pp.hostOpts = want
	if rt.host != nil && want == rt.hostOpts {
		pp.host = rt.host
		return nil
	}
	pp.host = plugin.NewHost(plugin.Options{
		PassEnv:         slices.Clone(p.PassEnv),
		EnvFile:         p.EnvFile,
		MaxOutputBytes:  p.MaxOutputBytes,
		AsyncMaxRuntime: p.AsyncMaxRuntime.D(),
		Callbacks:       rt.callbacks,
		Pins:            rt.pins,
		ProcessTrees:    rt.trees(),
		Sandbox:         rt.sandbox,
		Log:             rt.log,
	})
	pp.newHost = true
	return nil
}

// commit puts the plan in force: its host, then the direct plugins (new
// and changed modules loaded, removed ones shut down; a replaced module's
// shutdown() runs before its successor's initialize(), so this cannot
// happen before the plan is accepted), then its scan (what `tools --all`,
// the placeholder refresher and the watcher see), and prunes retired hosts
// that have nothing left running. It returns the direct plugins' tools and
// what did not load, as warnings.
func (rt *Source) commit(pp *plan) ([]toolhost.Tool, []string) {
	if pp.moveTo != nil {
		rt.moveOutbox(pp.moveTo, pp.moveDir)
	}
	rt.mu.Lock()
	var replaced *plugin.Host
	if pp.newHost {
		if rt.host != nil {
			rt.retired = append(rt.retired, rt.host)
			replaced = rt.host
		}
		rt.host, rt.hostOpts = pp.host, pp.hostOpts
	}
	host := rt.host
	rt.mu.Unlock()
	// Warm pools follow the scan in force: every commit drops them and
	// starts them again, so a changed config, config.env or profile is
	// never served by an interpreter started before it.
	if replaced != nil {
		replaced.Warm(nil, plugin.WarmConfig{})
	}
	var warnings []string
	if host != nil {
		warnings = host.Warm(pp.set, toolconfig.WarmConfig(pp.direct.cfg))
	}
	loaded := rt.loadDirect(pp.direct.cfg, pp.direct.plugins)
	rt.scanned(pp.p, pp.set, loaded)
	rt.pruneRetired()
	return loaded.Tools, append(warnings, directWarnings(loaded)...)
}

// discard undoes what preparing pp did: the new host is closed (nothing
// ran on it), and what was opened for the first configuration of plugins
// is closed.
func (rt *Source) discard(pp *plan) {
	if pp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), plugin.CloseWait)
	defer cancel()
	if pp.newHost {
		_ = pp.host.Close(ctx)
	}
	if pp.moveTo != nil {
		pp.moveTo.Close()
	}
	if pp.opened {
		rt.mu.Lock()
		cb, box := rt.callbacks, rt.box
		rt.callbacks, rt.box, rt.stateDir, rt.pins = nil, nil, "", nil
		rt.mu.Unlock()
		cctx, ccancel := context.WithTimeout(context.Background(), callbackCloseWait)
		defer ccancel()
		_ = cb.Close(cctx)
		box.Close()
	}
}

// pruneRetired closes the retired hosts with no process left: nothing can
// start on them any more, since their tools are no longer registered. A
// call that looked its tool up just before the swap and starts now gets
// the host's "closed" error.
func (rt *Source) pruneRetired() {
	rt.mu.Lock()
	var idle []*plugin.Host
	for _, h := range rt.retired {
		if h.Running() == 0 {
			idle = append(idle, h)
		}
	}
	rt.mu.Unlock()
	if len(idle) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, h := range idle {
		if err := h.Close(ctx); err != nil {
			rt.log.Warn().Err(err).Msg("closing a retired plugin host")
		}
	}
	// Dropped and counted in one step, so PluginKills never goes down.
	rt.mu.Lock()
	rt.retired = slices.DeleteFunc(rt.retired, func(h *plugin.Host) bool {
		if slices.Contains(idle, h) {
			rt.prunedKills += h.Kills()
			rt.prunedWarmCalls += h.WarmCalls()
			return true
		}
		return false
	})
	rt.mu.Unlock()
	rt.log.Debug().Int("hosts", len(idle)).Msg("closed plugin hosts retired by earlier reloads")
}

// loadDirect brings the running direct plugins in line with a scan: new and
// changed modules are loaded (initialize()), removed ones shut down. With
// plugins nil every running one is shut down.
func (rt *Source) loadDirect(cfg config.Config, plugins []*plugin.DirectPlugin) direct.Loaded {
	mem := map[string]int{}
	for name, t := range cfg.Tools {
		if t.MaxMemory > 0 {
			mem[name] = t.MaxMemory
		}
	}
	return rt.direct.Load(plugins, direct.Settings{Node: cfg.Plugins.Node, MaxMemoryMB: mem})
}

// directWarnings are the log lines for direct plugins that cannot run, or
// run without their HTTP routes.
func directWarnings(l direct.Loaded) []string {
	out := make([]string, 0, len(l.Unsupported)+len(l.Notices))
	for _, e := range l.Unsupported {
		out = append(out, fmt.Sprintf("plugin %q (%s) not hosted: %s", e.Name, e.Path, e.Reason))
	}
	for _, e := range l.Notices {
		out = append(out, fmt.Sprintf("plugin %q: %s", e.Name, e.Reason))
	}
	return out
}

// skippedDirect lists the direct plugins that run as no tool: services
// (running) and the ones that cannot run here.
func skippedDirect(l direct.Loaded) []Skipped {
	var out []Skipped
	for _, e := range l.Services {
		out = append(out, Skipped{Name: e.Name, Type: e.Type, Path: e.Path, Kind: "service", Reason: e.Reason})
	}
	for _, e := range l.Unsupported {
		out = append(out, Skipped{Name: e.Name, Type: e.Type, Path: e.Path, Kind: "unsupported", Reason: e.Reason})
	}
	return out
}

// isDirectScript says whether path is a JavaScript file in the folder of a
// direct plugin: editing one reloads that module on the next rescan.
func (rt *Source) isDirectScript(path string) bool {
	switch filepath.Ext(path) {
	case ".js", ".mjs", ".cjs":
	default:
		return false
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.directDirs[filepath.Dir(path)]
}
