package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// hostedTools is what `config check` learns by reading the plugin folders
// the way `run` does, without running anything.
type hostedTools struct {
	set   node.ToolSet // names every tool the config may refer to (Known)
	names []string     // set.Known
	// scanWarnings are what the daemon logs about the folders: manifests
	// it skips, a folder that is itself a plugin.
	scanWarnings []string
	// commands are the command names of each tool whose commands the
	// folders tell (plugins, built-ins).
	commands map[string][]string
	// running names the source of each tool whose commands are known only
	// once it runs (an MCP server's tools, a direct plugin).
	running map[string]string
}

// setupReport is what `run` would refuse that the config file alone does
// not show: no key anywhere, a group or a plugin folder that is not there,
// a plugin setup that cannot be read; and the checks that could not run.
type setupReport struct {
	problems []string
	warnings []string
	// notChecked are "WHAT: WHY" for checks whose inputs the file's own
	// problems left unknown.
	notChecked []string
	hosted     *hostedTools // nil when the plugins could not be read
}

func (r *setupReport) skip(what, why string) {
	r.notChecked = append(r.notChecked, what+": "+why)
}

// hasProblem says why a check cannot use a setting.
func hasProblem(key string) string { return key + " has a problem (above)" }

// setupProblems runs every check beyond the file whose inputs are known,
// also when the file has problems: the settings that decoded are checked,
// and a check that needs one that did not is named with the reason.
func (a *app) setupProblems(path string, p config.Partial) setupReport {
	var r setupReport
	if p.Unread != "" {
		r.skip("the key, the [control] group, the sandbox on this machine, the plugin folders, the [tools.NAME] names and approval windows", p.Unread)
		return r
	}
	cfg := p.Config
	bad := cmp.Or(p.Bad("hub.key"), p.Bad("hub.key_file"))
	if bad != "" && strings.TrimSpace(a.getenv(config.EnvKey)) == "" {
		r.skip("the key", hasProblem(bad))
	} else {
		switch _, err := cfg.Key(a.getenv); {
		case errors.Is(err, config.ErrNoKey):
			r.problems = append(r.problems, "hub: no key is set: put it in hub.key_file (or hub.key), or set "+config.EnvKey+"; the node cannot start without one")
		case err != nil:
			r.problems = append(r.problems, "hub: "+err.Error())
		}
	}
	if bad := p.Bad("control.group"); bad != "" {
		r.skip("the [control] group on this machine", hasProblem(bad))
	} else if g := cfg.Control.Group; g != "" {
		if _, err := user.LookupGroup(g); err != nil {
			if _, err := user.LookupGroupId(g); err != nil {
				r.problems = append(r.problems, fmt.Sprintf("control.group: no group %q on this machine", g))
			}
		}
	}
	a.sandboxHere(p, path, &r) // config_sandbox.go
	// The plugins are read only when every input of the scan is known and
	// every folder is there.
	unscanned := cmp.Or(p.Bad("plugins.env_file"), p.Bad("plugins.pass_env"))
	if unscanned != "" {
		unscanned = hasProblem(unscanned)
	}
	if bad := p.Lost("plugins.dirs"); bad != "" {
		r.skip("the plugin folders", hasProblem(bad))
		unscanned = cmp.Or(unscanned, hasProblem(bad))
	}
	for i, dir := range cfg.Plugins.Dirs {
		key := fmt.Sprintf("plugins.dirs[%d]", i)
		if bad := p.Bad(key); bad != "" {
			unscanned = cmp.Or(unscanned, hasProblem(bad))
			continue
		}
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			r.problems = append(r.problems, fmt.Sprintf("%s: %s: %v", key, dir, errors.Unwrap(err)))
		case !fi.IsDir():
			r.problems = append(r.problems, fmt.Sprintf("%s: %s is not a directory", key, dir))
		default:
			continue
		}
		unscanned = cmp.Or(unscanned, "a plugin folder is missing (above)")
	}
	const fromPlugins = "the [tools.NAME] names and the approval windows against the plugins' own timeouts"
	if unscanned != "" {
		r.skip(fromPlugins, unscanned)
		return r
	}
	// A bad [mcp] table is the file's problem, reported above; the other
	// tools are still checked against each other.
	if bad := p.Bad("mcp"); bad != "" {
		r.skip("the MCP servers' tools against the other tools", hasProblem(bad))
		cfg.MCP.Servers = nil
	}
	hosted, err := scanTools(cfg)
	if err != nil {
		r.problems = append(r.problems, err.Error())
		r.skip(fromPlugins, "the plugins could not be read (above)")
		return r
	}
	r.hosted = hosted
	r.warnings = append(r.warnings, hosted.scanWarnings...)
	problems, warnings := hosted.set.ConfigProblems(judged(p, &r))
	r.problems = append(r.problems, problems...)
	r.warnings = append(r.warnings, warnings...)
	return r
}

// judged is the part of p's config that the checks against the tools can
// judge: the settings they read that have a problem of their own (above)
// are left out, each named as not checked.
func judged(p config.Partial, r *setupReport) config.Config {
	cfg := p.Config
	if bad := p.Lost("tools"); bad != "" {
		r.skip("the [tools.NAME] names and approval windows", hasProblem(bad))
		cfg.Tools = nil
	}
	tools := map[string]config.ToolConfig{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		key := "tools." + name
		if bad := cmp.Or(p.Bad(key+".approval"), p.Bad(key+".approval_timeout"), p.Bad(key+".timeout")); bad != "" {
			r.skip(key+" approval window against the tool's own timeout", hasProblem(bad))
			continue
		}
		tools[name] = cfg.Tools[name]
	}
	cfg.Tools = tools
	for _, key := range []string{"node.exposed_tools", "node.hidden_tools"} {
		if bad := p.Bad(key); bad != "" {
			r.skip("the names in "+key, hasProblem(bad))
		}
	}
	if p.Bad("node.exposed_tools") != "" {
		cfg.Node.ExposedTools = nil
	}
	if p.Bad("node.hidden_tools") != "" {
		cfg.Node.HiddenTools = nil
	}
	return cfg
}

// scanTools reads the plugin folders as the daemon does and builds the
// tool set with node's own function, so it refuses what `run` refuses.
func scanTools(cfg config.Config) (*hostedTools, error) {
	var scan *plugin.Set
	h := &hostedTools{running: map[string]string{}}
	if p := cfg.Plugins; len(p.Dirs) > 0 {
		host := plugin.NewHost(plugin.Options{PassEnv: p.PassEnv, EnvFile: p.EnvFile, MaxOutputBytes: p.MaxOutputBytes,
			AsyncMaxRuntime: p.AsyncMaxRuntime.D(), Log: zerolog.Nop()})
		defer host.Close(context.Background())
		var err error
		if scan, err = host.Scan(p.Dirs); err != nil {
			return nil, fmt.Errorf("plugins: %w", err)
		}
		h.scanWarnings = scan.Warnings()
	}
	ts, err := node.CheckToolSet(cfg, scan)
	if err != nil {
		return nil, err
	}
	h.set, h.names = ts, ts.Known
	h.commands = ts.Commands()
	for _, t := range ts.Pending {
		h.running[t.Spec().Name] = t.Spec().Source
	}
	return h, nil
}

// unknownCommandWarnings names the [tools.X.commands.Y] tables that can
// never apply, at their place in the file: Y is not a command of X (the
// gate matches the command a call selects exactly), or X has a single
// command (a call of it selects none; [tools.X] approval covers it). The
// commands of an MCP server or a direct plugin are known once it runs:
// live has them when the daemon answers (nil otherwise).
func unknownCommandWarnings(path string, p config.Partial, hosted *hostedTools, live func() map[string][]string) []string {
	var ws []string
	var liveCmds map[string][]string
	asked := false
	for _, name := range slices.Sorted(maps.Keys(p.Config.Tools)) {
		t := p.Config.Tools[name]
		if len(t.Commands) == 0 || !slices.Contains(hosted.names, name) {
			continue // a tool it does not host is warned about already
		}
		cmds, known := hosted.commands[name]
		if !known {
			if !asked {
				liveCmds, asked = live(), true
			}
			if cmds, known = liveCmds[name]; !known {
				for _, cmd := range slices.Sorted(maps.Keys(t.Commands)) {
					ws = append(ws, p.Problem(fmt.Sprintf("not checked against the commands of %s: they come from %s and are known once it runs; run config check again while the daemon runs", name, hosted.running[name]),
						"tools", name, "commands", cmd).In(path))
				}
				continue
			}
		}
		for _, cmd := range slices.Sorted(maps.Keys(t.Commands)) {
			if msg := node.CommandProblem(name, cmd, cmds); msg != "" {
				ws = append(ws, p.Problem(msg, "tools", name, "commands", cmd).In(path))
			}
		}
	}
	return ws
}
