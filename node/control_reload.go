package node

import (
	"fmt"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// ReloadFile re-reads the config file at path and applies it with Reload:
// what `vcpnode reload`, SIGHUP and systemd's ExecReload do. On any error
// (unreadable or invalid file, unusable tools or audit file) nothing
// changes and the old config stays in force.
func (n *Node) ReloadFile(path string) (controlapi.ReloadReport, error) {
	// systemd (Type=notify) sees the reload; READY=1 ends it whatever the outcome.
	_ = n.notifier.Reloading()
	defer func() { _ = n.notifier.Ready("") }()
	cfg, err := config.Load(path)
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
	}
	return rep, err
}
