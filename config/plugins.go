package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// PluginsConfig is the [plugins] table: VCP plugin folders this node hosts.
type PluginsConfig struct {
	// Dirs are VCP "Plugin" directories, each holding plugin folders; a
	// plugin's PROJECT_BASE_PATH is its dir's parent.
	Dirs []string `toml:"dirs"`
	// PassEnv names variables of the daemon's environment that plugins see,
	// beyond the base set (PATH, HOME, LANG…).
	PassEnv []string `toml:"pass_env"`
	// EnvFile is a global config.env every plugin sees (VCP's own config.env).
	EnvFile string `toml:"env_file"`
	// AsyncMaxRuntime is how long an asynchronous plugin may keep running
	// after its first answer before it is killed.
	AsyncMaxRuntime Duration `toml:"async_max_runtime"`
	// MaxOutputBytes caps what is read from a plugin's stdout.
	MaxOutputBytes int `toml:"max_output_bytes"`
	// StateDir keeps what must survive a restart (the callback outbox);
	// empty means $STATE_DIRECTORY, /var/lib/vcpnode for root,
	// $XDG_STATE_HOME/vcpnode, or ~/.local/state/vcpnode.
	StateDir string `toml:"state_dir"`
	// Watch rescans the plugins when a folder or manifest changes.
	Watch bool `toml:"watch"`
	// Node is the Node.js executable that runs direct plugins (service,
	// hybridservice); empty means "node" on PATH.
	Node string `toml:"node"`
	// Warm lists the languages, comma-separated ("python", "node"), whose stdio
	// plugins keep interpreters started ahead of their calls; [tools.NAME]
	// warm overrides it per plugin. Empty warms none.
	Warm string `toml:"warm"`
	// WarmPool is how many interpreters wait per warm plugin.
	WarmPool int `toml:"warm_pool"`
}

// Bounds of the [plugins] settings.
const (
	minPluginOutputBytes = 1 * KiB
	maxPluginOutputBytes = 1 << 30
	minAsyncMaxRuntime   = time.Second
)

func defaultPluginsConfig() PluginsConfig {
	return PluginsConfig{
		// Empty, not nil: `config show` writes [] and must read back equal.
		Dirs:            []string{},
		PassEnv:         []string{},
		AsyncMaxRuntime: Duration(30 * time.Minute),
		MaxOutputBytes:  16 * MiB,
		Watch:           true,
		WarmPool:        1,
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c Config) checkPlugins(ps *problemList) {
	p := c.Plugins
	seen := map[string]int{}
	for i, dir := range p.Dirs {
		if msg := absPathProblem(dir); msg != "" {
			ps.add(indexKey("plugins.dirs", i), "%s", msg)
			continue
		}
		clean := filepath.Clean(dir)
		if j, dup := seen[clean]; dup {
			ps.add(indexKey("plugins.dirs", i), "%q is already plugins.dirs[%d]", dir, j)
		}
		seen[clean] = i
	}
	for i, name := range p.PassEnv {
		switch {
		case !envName.MatchString(name):
			ps.add(indexKey("plugins.pass_env", i), "%q is not an environment variable name (letters, digits and _, not starting with a digit)", name)
		case name == EnvKey:
			// The key is the node's alone; no plugin needs it.
			ps.add(indexKey("plugins.pass_env", i), "%s holds the hub key and is never passed to plugins", EnvKey)
		case slices.Index(p.PassEnv, name) < i:
			ps.add(indexKey("plugins.pass_env", i), "%q is listed twice", name)
		}
	}
	if p.EnvFile != "" {
		if msg := absPathProblem(p.EnvFile); msg != "" {
			ps.add("plugins.env_file", "%s", msg)
		}
	}
	if p.Node != "" {
		if msg := absPathProblem(p.Node); msg != "" {
			ps.add("plugins.node", "%s (or leave it out to use node from PATH)", msg)
		}
	}
	if p.StateDir != "" {
		if msg := absPathProblem(p.StateDir); msg != "" {
			ps.add("plugins.state_dir", "%s", msg)
		}
	}
	if p.AsyncMaxRuntime.D() < minAsyncMaxRuntime {
		ps.add("plugins.async_max_runtime", "must be at least 1s, like \"30m\" (got %s)", p.AsyncMaxRuntime)
	}
	if p.MaxOutputBytes < minPluginOutputBytes || p.MaxOutputBytes > maxPluginOutputBytes {
		ps.add("plugins.max_output_bytes", "must be between %d (1 KiB) and %d (1 GiB) (got %d)",
			minPluginOutputBytes, maxPluginOutputBytes, p.MaxOutputBytes)
	}
}

// WarmLanguages are the languages of [plugins] warm, blanks dropped.
func (p PluginsConfig) WarmLanguages() []string { return splitList(p.Warm) }

// splitList splits a comma-separated setting, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ErrNoStateDir means no state directory could be derived from the environment.
var ErrNoStateDir = errors.New("no state directory: set [plugins] state_dir to an absolute path")

// StateDirectory resolves where the node keeps state: state_dir, else the
// directory systemd made for the unit (StateDirectory=), else the usual
// places for root and for a user.
func (p PluginsConfig) StateDirectory(getenv func(string) string, euid int) (string, error) {
	if p.StateDir != "" {
		return p.StateDir, nil
	}
	// systemd lists one directory per StateDirectory= entry, colon-separated.
	if dir, _, _ := strings.Cut(getenv("STATE_DIRECTORY"), ":"); filepath.IsAbs(dir) {
		return dir, nil
	}
	if euid == 0 {
		return "/var/lib/vcpnode", nil
	}
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "vcpnode"), nil
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "vcpnode"), nil
	}
	return "", fmt.Errorf("%w ($STATE_DIRECTORY, $XDG_STATE_HOME and $HOME are unset)", ErrNoStateDir)
}
