package node

import (
	"fmt"
	"slices"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// ReloadFile re-reads the config file at path and applies it with Reload:
// what `vcpnode reload`, SIGHUP and systemd's ExecReload do. On any error
// (unreadable or invalid file, unusable tools or audit file) nothing
// changes and the old config stays in force. The report also covers the
// [control], [audit] and [metrics] tables.
func (n *Node) ReloadFile(path string) (controlapi.ReloadReport, error) {
	// systemd (Type=notify) sees the reload; READY=1 ends it whatever the outcome.
	_ = n.notifier.Reloading()
	defer func() { _ = n.notifier.Ready("") }()
	cfg, err := config.Load(path)
	if err == nil {
		err = n.tel.audit.check(cfg.Audit.File)
	}
	if err != nil {
		n.log.Error().Err(err).Str("config", path).Msg("reload failed; the old config stays in force")
		return controlapi.ReloadReport{}, fmt.Errorf("reload: config not applied, the old one stays in force: %w", err)
	}
	old := n.Config()
	rep, err := n.Reload(cfg)
	if err != nil {
		n.log.Error().Err(err).Str("config", path).Msg("reload failed; the old config stays in force")
		return rep, err
	}
	if old.Audit != cfg.Audit {
		rep.Changed = appendNew(rep.Changed, "audit") // takes effect at the next call
	}
	if old.Control != cfg.Control {
		rep.Changed = appendNew(rep.Changed, "control")
		rep.RestartNeeded = appendNew(rep.RestartNeeded, "control")
	}
	if old.Metrics != cfg.Metrics {
		rep.Changed = appendNew(rep.Changed, "metrics")
		rep.RestartNeeded = appendNew(rep.RestartNeeded, "metrics")
	}
	return rep, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
