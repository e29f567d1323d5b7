package toolconfig

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// SandboxProfiles resolves cfg's profiles with the built-ins.
func SandboxProfiles(cfg config.Config) (map[string]sandbox.Profile, error) {
	specs := make(map[string]sandbox.Spec, len(cfg.Sandbox.Profiles))
	for name, s := range cfg.Sandbox.Profiles {
		specs[name] = sandbox.Spec(s)
	}
	return sandbox.Resolve(specs)
}

// SandboxProfile is the profile cfg gives the tool, MCP server or command
// placeholder key (config.Config.SandboxTools' keys): its own, else the
// default. A host that keeps a process running (an MCP server, a direct
// plugin's Node.js host) restarts it when this changes.
func SandboxProfile(cfg config.Config, key string) string {
	if p := cfg.SandboxTools()[key]; p != "" {
		return p
	}
	if cfg.Sandbox.Profile != "" {
		return cfg.Sandbox.Profile
	}
	return sandbox.Default
}

// SandboxOptions are the sandbox settings of cfg, for a node whose config
// file is configFile: the profiles, the default, each tool's profile, and
// the node's own files no profile may grant (the config, the key file, the
// state directory, the audit log). Trees, Log and the rest are the
// caller's.
func SandboxOptions(cfg config.Config, configFile string, getenv func(string) string, euid int) (sandbox.Options, error) {
	profiles, err := SandboxProfiles(cfg)
	if err != nil {
		return sandbox.Options{}, err
	}
	return sandbox.Options{
		Profiles: profiles, Default: cfg.Sandbox.Profile, Tools: cfg.SandboxTools(),
		Protected: cfg.OwnFiles(configFile, getenv, euid), FileRoots: slices.Clone(cfg.Files.Roots), Require: cfg.Sandbox.Require,
	}, nil
}

// checkSandbox checks the profiles of [sandbox] and every profile name a
// tool, MCP server or command placeholder gives.
func checkSandbox(ps *problems, cfg config.Config) {
	profiles, err := SandboxProfiles(cfg)
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
		_, configured := cfg.Sandbox.Profiles[name]
		return builtin || configured
	}
	names := func() string {
		all := slices.Collect(maps.Keys(sandbox.Builtins()))
		for n := range cfg.Sandbox.Profiles {
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
	check("sandbox.profile", cfg.Sandbox.Profile)
	for name, t := range cfg.Tools {
		check(config.KeyPath("tools", name, "sandbox"), t.Sandbox)
	}
	for name, s := range cfg.MCP.Servers {
		check(config.KeyPath("mcp", "servers", name, "sandbox"), s.Sandbox)
	}
	for i, p := range cfg.Placeholders.Command {
		check(config.IndexKey("placeholders.command", i)+".sandbox", p.Sandbox)
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
