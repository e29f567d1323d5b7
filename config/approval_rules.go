package config

import "path/filepath"

// ApprovalRulesFile is the file in the state directory, beside
// OverridesFile, that keeps the owner's remembered answers (`vcpnode
// approve ID --always`, `deny ID --always`, the console's "Always"
// buttons). Only the daemon writes it; `config show` lists it.
const ApprovalRulesFile = "approval-rules.json"

// ApprovalRulesPath is where the rules of a node with this config live.
func (c Config) ApprovalRulesPath(getenv func(string) string, euid int) (string, error) {
	dir, err := c.Plugins.StateDirectory(getenv, euid)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ApprovalRulesFile), nil
}
