package config

import "path/filepath"

// SandboxConfig is the [sandbox] table: the permission profiles every
// process a call starts runs under (package toolhost/sandbox).
type SandboxConfig struct {
	// Profile is the profile of every tool that names none; "" is "default".
	Profile string `toml:"profile"`
	// Require makes a machine that cannot enforce a profile in use refuse
	// to start instead of warning.
	Require bool `toml:"require"`
	// Profiles are the configured profiles by name, added to the built-ins
	// (default, offline, none).
	Profiles map[string]SandboxSpec `toml:"profiles"`
}

// SandboxSpec is a profile as the file writes it ([sandbox.profiles.NAME]);
// unset fields take the values of the profile it extends. Its fields are
// toolhost/sandbox's Spec, which resolves it.
type SandboxSpec struct {
	Extends      string   `toml:"extends"`
	Read         []string `toml:"read"`
	Write        []string `toml:"write"`
	Network      *bool    `toml:"network"`
	ConnectPorts []int    `toml:"connect_ports"`
	Memory       string   `toml:"memory"`
	Pids         int      `toml:"pids"`
	CPU          float64  `toml:"cpu"`
}

// SandboxTools maps each tool, MCP server and command placeholder that
// names a profile to it: keys are tool names, "mcp:SERVER" and
// "placeholder:NAME".
func (c Config) SandboxTools() map[string]string {
	out := map[string]string{}
	for name, t := range c.Tools {
		if t.Sandbox != "" {
			out[name] = t.Sandbox
		}
	}
	for name, s := range c.MCP.Servers {
		if s.Sandbox != "" {
			out[MCPSandboxKey(name)] = s.Sandbox
		}
	}
	for _, p := range c.Placeholders.Command {
		if p.Sandbox != "" {
			out[PlaceholderSandboxKey(p.Name)] = p.Sandbox
		}
	}
	return out
}

// MCPSandboxKey is an MCP server's key in SandboxTools.
func MCPSandboxKey(server string) string { return "mcp:" + server }

// PlaceholderSandboxKey is a command placeholder's key in SandboxTools.
func PlaceholderSandboxKey(name string) string { return "placeholder:" + name }

// OwnFiles are the node's own files that no tool may read or write and no
// sandbox profile may grant, even inside a file root: the key file, the
// audit log, the config file (when known) and the state directory. Unset
// ones are left out.
func (c Config) OwnFiles(configFile string, getenv func(string) string, euid int) []string {
	var own []string
	for _, p := range []string{c.Hub.KeyFile, c.Audit.File} {
		if p != "" {
			own = append(own, p)
		}
	}
	if configFile != "" {
		if abs, err := filepath.Abs(configFile); err == nil {
			own = append(own, abs)
		}
	}
	if dir, err := c.Plugins.StateDirectory(getenv, euid); err == nil {
		own = append(own, dir)
	}
	return own
}
