package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
)

// Reload applies cfg. It is checked and built completely first: on any error
// nothing changes (no process is started or stopped) and the old config
// stays in force. Then MCP servers and direct plugins are started, restarted
// and stopped, and calls see the new tools and policy in one step. Tools,
// exposure and file roots change at once; hub settings and a changed set of
// registered tools make the node reconnect, because the server can neither
// update nor remove a registration; the report names every table a reload
// does not apply (reloadRules, reload_sections.go).
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
	st, warnings := pl.st, pl.warnings
	old := n.settings()
	before, _ := n.disp.Manifests()
	warnings = append(warnings, n.commit(pl)...)
	applyMemoryLimit(cfg.Node.MemoryLimit)
	after, _ := n.disp.Manifests()
	placeholdersRemoved, phWarnings := n.applyPlaceholders(st) // placeholders.go
	warnings = append(warnings, phWarnings...)

	rep := controlapi.ReloadReport{Warnings: warnings}
	rep.Changed, rep.RestartNeeded = reloadSections(old.cfg, cfg) // reload_sections.go
	for _, w := range warnings {
		n.log.Warn().Msg(w)
	}
	if !sameHub(old, st) || !sameManifests(before, after) || placeholdersRemoved {
		rep.Reconnected = true
		n.restartSession()
	}
	n.log.Info().Strs("changed", rep.Changed).Bool("reconnect", rep.Reconnected).Msg("config reloaded")
	return rep, nil
}

// restartSession makes the connected session close and the loop reconnect at
// once; while disconnected it cuts the backoff short, since the next attempt
// already uses the new settings.
func (n *Node) restartSession() {
	if s, _ := n.state.get(); s.Phase == PhaseConnected {
		select {
		case n.restart <- struct{}{}:
		default:
		}
		return
	}
	n.Reconnect()
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

// sameHub says whether two settings connect the same way, as the same node.
func sameHub(a, b *settings) bool {
	return a.hubURL.String() == b.hubURL.String() && a.name == b.name && a.cfg.Hub == b.cfg.Hub
}

func sameManifests(a, b []json.RawMessage) bool {
	return slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return string(x) == string(y) })
}
