package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/builtin"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// hostedTools is what `config check` learns by reading the plugin folders
// the way `run` does, without running anything.
type hostedTools struct {
	names    []string                 // every tool name the config may refer to
	timeouts map[string]time.Duration // a tool's own timeout, when it has one
}

// setupProblems are what `run` would refuse that the config file alone does
// not show: no key anywhere, a plugin folder that is not there, a plugin
// setup that cannot be read. hosted is nil when the plugins could not be
// read.
func (a *app) setupProblems(cfg config.Config) (problems []string, hosted *hostedTools) {
	switch _, err := cfg.Key(a.getenv); {
	case errors.Is(err, config.ErrNoKey):
		problems = append(problems, "hub: no key is set: put it in hub.key_file (or hub.key), or set "+config.EnvKey+"; the node cannot start without one")
	case err != nil:
		problems = append(problems, "hub: "+err.Error())
	}
	if g := cfg.Control.Group; g != "" {
		if _, err := user.LookupGroup(g); err != nil {
			if _, err := user.LookupGroupId(g); err != nil {
				problems = append(problems, fmt.Sprintf("control.group: no group %q on this machine", g))
			}
		}
	}
	missing := false
	for i, dir := range cfg.Plugins.Dirs {
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("plugins.dirs[%d]: %s: %v", i, dir, errors.Unwrap(err)))
			missing = true
		case !fi.IsDir():
			problems = append(problems, fmt.Sprintf("plugins.dirs[%d]: %s is not a directory", i, dir))
			missing = true
		}
	}
	if missing {
		return problems, nil
	}
	hosted, err := scanTools(cfg)
	if err != nil {
		problems = append(problems, err.Error())
		return problems, nil
	}
	return append(problems, approvalProblems(cfg, hosted)...), hosted
}

// scanTools reads the plugin folders as the daemon does and lists the tools.
func scanTools(cfg config.Config) (*hostedTools, error) {
	h := &hostedTools{names: []string{toolhost.FileToolName}, timeouts: map[string]time.Duration{}}
	// The built-in tools the node always has (exposed only when named).
	files := toolhost.FileOptions{Roots: cfg.Files.Roots, MaxBytes: cfg.Files.MaxBytes}
	for _, t := range builtin.New(toolhost.NewFileAccess(files)) {
		spec := t.Spec()
		h.names = append(h.names, spec.Name)
		if spec.Timeout > 0 {
			h.timeouts[spec.Name] = spec.Timeout
		}
	}
	if len(cfg.Plugins.Dirs) == 0 {
		slices.Sort(h.names)
		return h, nil
	}
	p := cfg.Plugins
	host := plugin.NewHost(plugin.Options{PassEnv: p.PassEnv, EnvFile: p.EnvFile, MaxOutputBytes: p.MaxOutputBytes,
		AsyncMaxRuntime: p.AsyncMaxRuntime.D(), Log: zerolog.Nop()})
	defer host.Close(context.Background())
	set, err := host.Scan(p.Dirs)
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	for _, t := range set.Tools {
		spec := t.Spec()
		h.names = append(h.names, spec.Name)
		if spec.Timeout > 0 {
			h.timeouts[spec.Name] = spec.Timeout
		}
	}
	for _, d := range set.Direct {
		h.names = append(h.names, d.Name)
		if d.Spec.Timeout > 0 {
			h.timeouts[d.Name] = d.Spec.Timeout
		}
	}
	for _, s := range set.Static {
		h.names = append(h.names, s.Name)
	}
	for _, group := range [][]plugin.Entry{set.Disabled, set.Unsupported} {
		for _, e := range group {
			if e.Name != "" {
				h.names = append(h.names, e.Name)
			}
		}
	}
	slices.Sort(h.names)
	h.names = slices.Compact(h.names)
	return h, nil
}

// approvalProblems: an "ask" window as long as the tool's deadline would
// let the call time out while it waits for the owner. The config check
// covers a timeout the config sets; this one covers the tool's own (a
// plugin manifest's communication.timeout), which only the folders tell.
func approvalProblems(cfg config.Config, hosted *hostedTools) []string {
	var ps []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		t := cfg.Tools[name]
		own, known := hosted.timeouts[name]
		if t.Approval != string(toolhost.ApprovalAsk) || t.Timeout != 0 || !known {
			continue
		}
		wait, what := t.ApprovalTimeout.D(), "approval_timeout"
		if wait == 0 {
			wait, what = toolhost.DefaultApprovalTimeout, "approval_timeout (default)"
		}
		if wait >= own {
			ps = append(ps, fmt.Sprintf("tools.%s: %s %s is not below the tool's own timeout %s (from its manifest): the call would time out before it could be approved; set approval_timeout below it, or raise [tools.%s] timeout",
				name, what, toolhost.ShortDuration(wait), toolhost.ShortDuration(own), name))
		}
	}
	return ps
}

// unknownToolWarnings names [tools.X] tables that match no tool this node
// hosts, with the list of those it does.
func unknownToolWarnings(cfg config.Config, hosted *hostedTools) []string {
	var ws []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		if !slices.Contains(hosted.names, name) {
			ws = append(ws, fmt.Sprintf("[tools.%s] names no tool this node hosts (known: %s)", name, strings.Join(hosted.names, ", ")))
		}
	}
	return ws
}
