package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"reflect"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// Reload applies cfg. It is checked and built completely first: on any error
// nothing changes (no process is started or stopped) and the old config
// stays in force. Then MCP servers and direct plugins are started, restarted
// and stopped, and calls see the new tools and policy in one step. Tools,
// exposure and file roots change at once; hub settings and a changed set of
// registered tools make the node reconnect, because the server can neither
// update nor remove a registration; the report names every table a reload
// does not apply (reloadRules).
func (n *Node) Reload(cfg config.Config) (controlapi.ReloadReport, error) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	return n.reload(cfg)
}

// Rescan re-applies the config in force, picking up changed plugin folders.
// Reading the config under the reload lock keeps a concurrent Reload's newer
// config from being overwritten with the one it replaced.
func (n *Node) Rescan() (controlapi.ReloadReport, error) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	return n.reload(n.baseCfg)
}

func (n *Node) reload(base config.Config) (controlapi.ReloadReport, error) {
	cfg, ov, ovPath := n.withOverrides(base)
	sbOpts, err := n.checkSandbox(cfg) // sandbox.go
	if err != nil {
		return controlapi.ReloadReport{}, fmt.Errorf("reload: config not applied, the old one stays in force: %w", err)
	}
	pl, err := n.prepare(cfg)
	if err != nil {
		return controlapi.ReloadReport{}, fmt.Errorf("reload: config not applied, the old one stays in force: %w", err)
	}
	if err := n.sandbox.Update(sbOpts); err != nil { // checked above: cannot fail
		n.log.Error().Err(err).Msg("sandbox settings not applied")
	}
	n.baseCfg = base
	n.overrides.Store(&overridesInForce{o: ov, path: ovPath})
	n.loadApprovalRules(base) // approval_rules.go
	n.useHubAuthFile(cfg)     // hub.go
	st, warnings := pl.st, pl.warnings
	old := n.settings()
	before, _ := n.disp.Manifests()
	warnings = append(warnings, n.commit(pl)...)
	applyMemoryLimit(cfg.Node.MemoryLimit)
	after, _ := n.disp.Manifests()
	placeholdersRemoved, phWarnings := n.applyPlaceholders(st)
	warnings = append(warnings, phWarnings...)

	rep := controlapi.ReloadReport{Warnings: warnings}
	rep.Changed, rep.RestartNeeded = reloadSections(old.Config, cfg)
	for _, w := range warnings {
		n.log.Warn().Msg(w)
	}
	if !hubsession.SameHub(&old.Settings, &st.Settings) || !sameManifests(before, after) || placeholdersRemoved {
		rep.Reconnected = true
		n.hub.Restart()
	}
	n.log.Info().Strs("changed", rep.Changed).Bool("reconnect", rep.Reconnected).Msg("config reloaded")
	return rep, nil
}

// recommit prepares srcs alone with the config in force, commits them and
// registers the tools again (toolsource.Env.Relisted); every other source,
// the placeholders and the policy stay as they are, and the node
// reconnects if what the server sees changed. ok is false, and nothing
// changed, when a source refuses the config in force or claims other names
// (Specs) than in force, which only a whole pass checks.
func (n *Node) recommit(srcs []toolsource.Source) (rep controlapi.ReloadReport, ok bool) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	cfg := n.Config()
	pl := *n.inForce
	pl.sources = slices.Clone(pl.sources)
	env := n.toolEnv(cfg)
	var prepared []toolsource.Prepared
	for _, src := range srcs {
		i := slices.Index(n.sources, src)
		env.Relisted = func() { n.sourceRelisted(src) }
		p, err := src.Prepare(cfg, env)
		if err == nil {
			prepared = append(prepared, p)
		}
		if i < 0 || err != nil || !sameNames(pl.sources[i].Specs(), p.Specs()) {
			discardSources(prepared)
			return rep, false
		}
		pl.sources[i] = p
	}
	before, _ := n.disp.Manifests()
	rep.Warnings = commitSources(prepared, pl.taken)
	n.inForce = &pl
	reg, warnings := n.register(&pl)
	rep.Warnings = append(rep.Warnings, warnings...)
	n.disp.Swap(reg, toolconfig.Policy(cfg))
	after, _ := n.disp.Manifests()
	for _, w := range rep.Warnings {
		n.log.Warn().Msg(w)
	}
	if !sameManifests(before, after) {
		rep.Reconnected = true
		n.hub.Restart()
	}
	return rep, true
}

// CallLocal runs a tool through the same pipeline as a remote call (limits,
// timeout, result shaping) but skips the exposure policy: it is the owner
// testing a tool. The outcome is what the server would have received.
func (n *Node) CallLocal(ctx context.Context, requestID, tool string, args map[string]json.RawMessage) toolhost.Outcome {
	done := make(chan toolhost.Outcome, 1)
	call := toolhost.Call{RequestID: requestID, Args: args, Local: true}
	n.callStarted(requestID, tool, true)
	if !n.disp.Dispatch(ctx, tool, call, func(o toolhost.Outcome) { done <- o }) {
		return toolhost.Outcome{RequestID: requestID, Err: fmt.Sprintf("request id %q is already in flight", requestID)}
	}
	return <-done
}

func sameNames(a, b []toolhost.Spec) bool {
	return slices.EqualFunc(a, b, func(x, y toolhost.Spec) bool { return x.Name == y.Name })
}

func sameManifests(a, b []json.RawMessage) bool {
	return slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return string(x) == string(y) })
}

// ReloadFile re-reads the config file at path and applies it with Reload:
// what `vcpnode reload`, SIGHUP and systemd's ExecReload do. On any error
// (unreadable or invalid file, unusable tools or audit file) nothing
// changes and the old config stays in force.
func (n *Node) ReloadFile(path string) (controlapi.ReloadReport, error) {
	// systemd (Type=notify) sees the reload; READY=1 ends it whatever the outcome.
	if n.notifier != nil {
		_ = n.notifier.Reloading()
		defer func() { _ = n.notifier.Ready("") }()
	}
	cfg, err := config.Load(path, toolconfig.Check)
	if err == nil {
		err = n.tel.audit.Check(cfg.Audit.File)
	}
	if err != nil {
		n.log.Error().Err(err).Str("config", path).Msg("reload failed; the old config stays in force")
		return controlapi.ReloadReport{}, fmt.Errorf("reload: config not applied, the old one stays in force: %w", err)
	}
	rep, err := n.Reload(cfg)
	if err != nil {
		n.log.Error().Err(err).Str("config", path).Msg("reload failed; the old config stays in force")
		return rep, err
	}
	// As run logs them at start and config check prints them.
	for _, w := range config.PermissionWarnings(path, cfg) {
		n.log.Warn().Msg(w)
		rep.Warnings = append(rep.Warnings, w)
	}
	return rep, nil
}

// reloadRule is what a reload does with one table of the config: the
// table is named in the report's Changed when it differs, and in
// RestartNeeded when the part of it a reload does not apply differs.
type reloadRule struct {
	section string                  // the table, as the report names it
	value   func(config.Config) any // every setting of the table
	// kept is the part a reload leaves as it was until a restart (nil:
	// a reload applies the whole table), named keptName in the report.
	kept     func(config.Config) any
	keptName string
}

// reloadRules is the one list of what a reload applies; every table of
// config.Config has a row (TestReloadRulesCoverEveryTable).
var reloadRules = []reloadRule{
	{section: "hub", value: func(c config.Config) any { return c.Hub }},
	{section: "node", value: func(c config.Config) any { return c.Node },
		kept: func(c config.Config) any {
			return [5]any{c.Node.MaxConcurrent, c.Node.Queue, c.Node.MaxResultBytes, c.Mode(), c.Node.Register}
		}, keptName: "node.max_concurrent, node.queue, node.max_result_bytes, node.mode and node.register"},
	{section: "files", value: func(c config.Config) any { return c.Files }},
	whole("log", func(c config.Config) any { return c.Log }),
	{section: "tools", value: func(c config.Config) any { return c.Tools }},
	{section: "plugins", value: func(c config.Config) any { return c.Plugins }},
	whole("control", func(c config.Config) any { return c.Control }),        // the socket is open
	{section: "audit", value: func(c config.Config) any { return c.Audit }}, // from the next call
	whole("metrics", func(c config.Config) any { return c.Metrics }),        // its listener
	whole("console", func(c config.Config) any { return c.Console }),        // its listener and sessions
	{section: "placeholders", value: func(c config.Config) any { return c.Placeholders }},
	{section: "mcp", value: func(c config.Config) any { return c.MCP }},
	whole("observer", func(c config.Config) any { return c.Observer }),          // connections made at start
	{section: "sandbox", value: func(c config.Config) any { return c.Sandbox }}, // from the next process started
	{section: "bridge", value: func(c config.Config) any { return c.Bridge }},   // the registry is rebuilt
}

// whole is the rule of a table a reload does not apply at all.
func whole(section string, value func(config.Config) any) reloadRule {
	return reloadRule{section: section, value: value, kept: value, keptName: section}
}

// reloadSections lists the tables that differ between old and cfg, and
// among them what only a restart applies.
func reloadSections(old, cfg config.Config) (changed, restartNeeded []string) {
	for _, r := range reloadRules {
		if reflect.DeepEqual(r.value(old), r.value(cfg)) {
			continue
		}
		changed = append(changed, r.section)
		if r.kept != nil && !reflect.DeepEqual(r.kept(old), r.kept(cfg)) {
			restartNeeded = append(restartNeeded, r.keptName)
		}
	}
	return changed, restartNeeded
}

// applyPlaceholders is the reload step for placeholders: when keys lost
// their source, the node reconnects, since the server cannot delete a key
// but drops all of a node's keys when it disconnects.
func (n *Node) applyPlaceholders(st *settings) (reconnect bool, warnings []string) {
	removed, warnings := n.ph.Apply(st.placeholderJobs, st.Config.Placeholders)
	if len(removed) == 0 {
		return false, warnings
	}
	n.log.Info().Strs("placeholders", removed).
		Msg("placeholders removed by the reload; reconnecting, since the server forgets a node's placeholders only when it disconnects")
	return true, warnings
}
