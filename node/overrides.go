package node

import (
	"errors"
	"fmt"
	"os"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
)

// The console's per-tool switches (expose, approval, timeout) live in
// config.OverridesFile in the state directory, applied over the config
// file at start, at every reload and when a switch changes; a change
// reloads like `vcpnode reload`, so the server's registration follows.

// errNoOverrides: no state directory, so switches cannot be kept.
var errNoOverrides = errors.New("tool switches need a state directory: set [plugins] state_dir")

// withOverrides applies the overrides file of cfg's state directory. A
// file that cannot be read is reported and left out: the config file alone
// still starts the node.
func (n *Node) withOverrides(cfg config.Config) (config.Config, config.Overrides, string) {
	path, err := cfg.OverridesPath(n.getenv, os.Geteuid())
	if err != nil {
		return cfg, config.Overrides{}, ""
	}
	o, err := config.LoadOverrides(path)
	if err != nil {
		n.log.Warn().Err(err).Msg("tool overrides left out")
		return cfg, config.Overrides{}, path
	}
	return o.Apply(cfg), o, path
}

// overrides is what is in force: the switches and their file ("" without
// a state directory).
type overridesInForce struct {
	o    config.Overrides
	path string
}

// SetToolOverride changes name's switches, saves them and reloads.
func (n *Node) SetToolOverride(name string, req controlapi.ToolOverrideRequest) (controlapi.ToolOverrideResponse, error) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	known := false
	for _, t := range n.Tools() {
		known = known || t.Spec.Name == name
	}
	if !known {
		return controlapi.ToolOverrideResponse{}, n.withClosestTool(fmt.Errorf("%w: %q", toolhost.ErrUnknownTool, name), name)
	}
	base := n.baseCfg
	path, err := base.OverridesPath(n.getenv, os.Geteuid())
	if err != nil {
		return controlapi.ToolOverrideResponse{}, fmt.Errorf("%w (%v)", errNoOverrides, err)
	}
	old, err := config.LoadOverrides(path)
	if err != nil {
		return controlapi.ToolOverrideResponse{}, err
	}
	next := config.Overrides{Tools: map[string]config.ToolOverride{}}
	for k, v := range old.Tools {
		next.Tools[k] = v
	}
	t := next.Tools[name]
	switch {
	case req.Reset:
		t = config.ToolOverride{}
	default:
		if req.Expose != nil {
			t.Expose = req.Expose
		}
		if req.Approval != "" {
			t.Approval = req.Approval
		}
		if req.Timeout != "" {
			d, err := config.ParseToolTimeout(req.Timeout)
			if err != nil {
				return controlapi.ToolOverrideResponse{}, err
			}
			t.Timeout = d
		}
	}
	if err := next.Set(name, t); err != nil {
		return controlapi.ToolOverrideResponse{}, err
	}
	if err := next.Save(path); err != nil {
		return controlapi.ToolOverrideResponse{}, err
	}
	rep, err := n.reload(base)
	if err != nil {
		if serr := old.Save(path); serr != nil {
			err = errors.Join(err, serr)
		}
		return controlapi.ToolOverrideResponse{}, err
	}
	n.log.Info().Str("tool", name).Strs("overrides", next.Describe()).Msg("tool switches changed in the console")
	return controlapi.ToolOverrideResponse{Tool: name, Override: next.Tools[name], File: path, ReloadReport: rep}, nil
}
