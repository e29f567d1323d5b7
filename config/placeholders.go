package config

import (
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// PlaceholdersConfig is the [placeholders] table: {{Name}} values this node
// feeds the server's system prompts, besides those of static plugins.
type PlaceholdersConfig struct {
	// PushInterval is the least time between two pushes of changed values.
	PushInterval Duration `toml:"push_interval"`
	// MinInterval is the least time between two runs of one source (a
	// static plugin or a command), measured from start to start.
	MinInterval Duration `toml:"min_interval"`
	// Values are fixed texts by placeholder name, braces optional.
	Values map[string]string `toml:"values,omitempty"`
	// Command placeholders take the output of a shell command.
	Command []CommandPlaceholderConfig `toml:"command,omitempty"`
	// System is the built-in status line of this machine.
	System SystemPlaceholderConfig `toml:"system"`
}

// CommandPlaceholderConfig is one [[placeholders.command]] entry.
type CommandPlaceholderConfig struct {
	Name    string   `toml:"name"`    // the placeholder, braces optional
	Command string   `toml:"command"` // run with /bin/sh -c
	Every   Duration `toml:"every"`   // rerun interval; or Cron; neither runs once
	Cron    string   `toml:"cron"`    // 5 fields, or 6 with seconds first
	Timeout Duration `toml:"timeout"` // 0 = DefaultCommandTimeout
	Sandbox string   `toml:"sandbox"` // the command's profile; "" is sandbox.profile
}

// SystemPlaceholderConfig is the [placeholders.system] table.
type SystemPlaceholderConfig struct {
	Enabled bool `toml:"enabled"`
	// Name is the placeholder; empty means "<node name>Status".
	Name string `toml:"name"`
	// Disk is the path whose file system's free space is shown; empty is "/".
	Disk string `toml:"disk"`
}

// Defaults and bounds of the [placeholders] settings.
const (
	DefaultCommandTimeout = 10 * time.Second
	minPushInterval       = 100 * time.Millisecond
)

func defaultPlaceholdersConfig() PlaceholdersConfig {
	return PlaceholdersConfig{
		PushInterval: Duration(2 * time.Second),
		// As the official node enforces: a cron of every few seconds must
		// not turn a slow plugin into a busy loop.
		MinInterval: Duration(10 * time.Second),
	}
}

func (c Config) checkPlaceholders(ps *problemList) {
	p := c.Placeholders
	if p.PushInterval.D() < minPushInterval {
		ps.add("placeholders.push_interval", "must be at least 100ms, like \"2s\" (got %s)", p.PushInterval)
	}
	if p.MinInterval < 0 {
		ps.add("placeholders.min_interval", "must not be negative (got %s)", p.MinInterval)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Values)) {
		key := keyPath("placeholders", "values", name)
		if strings.TrimSpace(p.Values[name]) == "" {
			ps.add(key, "is empty: the server would show \"[Placeholder %s has no value]\"; remove it or give it a value", name)
		}
	}
	for i, cmd := range p.Command {
		key := indexKey("placeholders.command", i)
		if cmd.Name == "" {
			ps.add(key+".name", "is missing: name the placeholder, like \"DevBoxGitBranch\"")
		}
		if strings.TrimSpace(cmd.Command) == "" {
			ps.add(key+".command", "is missing: the shell command whose output is the value")
		}
		if cmd.Every < 0 {
			ps.add(key+".every", "must be positive, like \"1m\" (got %s)", cmd.Every)
		}
		if cmd.Every != 0 && cmd.Cron != "" {
			ps.add(key+".cron", "set either every or cron, not both")
		}
		if cmd.Timeout < 0 {
			ps.add(key+".timeout", "must be positive, like \"5s\", or left out for %s (got %s)", DefaultCommandTimeout, cmd.Timeout)
		}
	}
	if s := p.System; s.Enabled {
		if s.Disk != "" {
			if msg := absPathProblem(s.Disk); msg != "" {
				ps.add("placeholders.system.disk", "%s", msg)
			}
		}
	}
}

// SystemPlaceholderName is placeholders.system.name, or "<node name>Status"
// with the characters a placeholder cannot hold replaced by "_".
func (c Config) SystemPlaceholderName() string {
	if c.Placeholders.System.Name != "" {
		return c.Placeholders.System.Name
	}
	node := c.Hub.Name
	if node == "" {
		node, _ = os.Hostname()
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_.:-", r):
			return r
		}
		return '_'
	}, node)
	return safe + "Status"
}
