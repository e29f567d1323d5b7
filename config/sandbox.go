package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

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
	Profiles map[string]sandbox.Spec `toml:"profiles"`
}

// SandboxProfiles resolves the configured profiles with the built-ins.
func (c Config) SandboxProfiles() (map[string]sandbox.Profile, error) {
	return sandbox.Resolve(c.Sandbox.Profiles)
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

// SandboxProfile is the profile c gives the tool, MCP server or command
// placeholder key (SandboxTools' keys): its own, else the default. A host
// that keeps a process running (an MCP server, a direct plugin's Node.js
// host) restarts it when this changes.
func (c Config) SandboxProfile(key string) string {
	if p := c.SandboxTools()[key]; p != "" {
		return p
	}
	if c.Sandbox.Profile != "" {
		return c.Sandbox.Profile
	}
	return sandbox.Default
}

// MCPSandboxKey is an MCP server's key in SandboxTools.
func MCPSandboxKey(server string) string { return "mcp:" + server }

// PlaceholderSandboxKey is a command placeholder's key in SandboxTools.
func PlaceholderSandboxKey(name string) string { return "placeholder:" + name }

func (c Config) checkSandbox(ps *problemList) {
	profiles, err := c.SandboxProfiles()
	for _, e := range flatten(err) {
		var fe *sandbox.FieldError
		if errors.As(e, &fe) {
			ps.add("sandbox."+fe.Key, "%v", fe.Err)
		} else {
			ps.add("sandbox.profiles", "%v", e)
		}
	}
	known := func(name string) bool {
		if profiles != nil {
			_, ok := profiles[name]
			return ok
		}
		_, builtin := sandbox.Builtins()[name]
		_, configured := c.Sandbox.Profiles[name]
		return builtin || configured
	}
	names := func() string {
		var all []string
		for n := range sandbox.Builtins() {
			all = append(all, n)
		}
		for n := range c.Sandbox.Profiles {
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
		slices.Sort(all)
		return strings.Join(all, ", ")
	}
	check := func(key, name string) {
		if name != "" && !known(name) {
			ps.add(key, "unknown sandbox profile %q (known: %s)", name, names())
		}
	}
	check("sandbox.profile", c.Sandbox.Profile)
	for name, t := range c.Tools {
		check(keyPath("tools", name, "sandbox"), t.Sandbox)
	}
	for name, s := range c.MCP.Servers {
		check(keyPath("mcp", "servers", name, "sandbox"), s.Sandbox)
	}
	for i, p := range c.Placeholders.Command {
		check(indexKey("placeholders.command", i)+".sandbox", p.Sandbox)
	}
}

// flatten splits an errors.Join error into its parts.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// SandboxOptions are the sandbox settings of this config, for a node whose
// config file is configFile: the profiles, the default, each tool's profile,
// and the node's own files no profile may grant (the config, the key
// file, the state directory, the audit log). Trees, Log and the rest are
// the caller's.
func (c Config) SandboxOptions(configFile string, getenv func(string) string, euid int) (sandbox.Options, error) {
	profiles, err := c.SandboxProfiles()
	if err != nil {
		return sandbox.Options{}, err
	}
	return sandbox.Options{
		Profiles: profiles, Default: c.Sandbox.Profile, Tools: c.SandboxTools(),
		Protected: c.OwnFiles(configFile, getenv, euid), FileRoots: slices.Clone(c.Files.Roots), Require: c.Sandbox.Require,
	}, nil
}

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
