package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vcpnode/vcpnode/service/launchd"
)

// Layout is where one scope's service lives on this machine. The paths are
// as installed; Host.FSRoot is applied only when touching them.
type Layout struct {
	System  bool
	Manager string // Systemd or Launchd
	Home    string // the user's home; "" for the system scope
	Binary  string // the executable the service runs; needed by Install only
	Config  string
	// ConfigFrom says how Config was found, for the output.
	ConfigFrom string
	// NewConfig is what Install writes to Config when there is none.
	NewConfig []byte
	UnitPath  string // the systemd unit or launchd plist
	StateDir  string
	LogDir    string // launchd only
}

// NewLayout is the layout of the system or the user scope on h, without
// its config and binary. Unless dryRun, the scope must fit who runs it: the
// system's needs root, and root has no user service.
func (h *Host) NewLayout(system, dryRun bool) (Layout, error) {
	l := Layout{System: system}
	switch h.GOOS {
	case "linux":
		l.Manager = Systemd
	case "darwin":
		l.Manager = Launchd
	default:
		return l, fmt.Errorf("service: %s is not supported: vcpnode knows systemd (Linux) and launchd (macOS); run `vcpnode run` under your own supervisor", h.GOOS)
	}
	if !dryRun {
		switch {
		case l.System && h.EUID != 0:
			return l, fmt.Errorf("a system service needs root: run it with sudo, or use --user for a service of your own (--dry-run shows what it would do)")
		case !l.System && h.EUID == 0:
			return l, fmt.Errorf("--user as root would make a service of root's: run it as the user the node should run as, or use --system")
		}
	}
	if !l.System {
		l.Home = h.Getenv("HOME")
		if !filepath.IsAbs(l.Home) {
			return l, errors.New("$HOME is not set to an absolute path: the user service's files go under it")
		}
	}
	l.fillPaths(h.Getenv)
	return l, nil
}

// fillPaths sets the unit, state and log paths of the layout's scope.
func (l *Layout) fillPaths(getenv func(string) string) {
	switch {
	case l.Manager == Systemd && l.System:
		l.UnitPath = "/etc/systemd/system/vcpnode.service"
		l.StateDir = "/var/lib/vcpnode"
	case l.Manager == Systemd:
		l.UnitPath = filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", l.Home, ".config"), "systemd", "user", "vcpnode.service")
		l.StateDir = filepath.Join(xdgDir(getenv, "XDG_STATE_HOME", l.Home, ".local/state"), "vcpnode")
	case l.System:
		l.UnitPath = "/Library/LaunchDaemons/" + launchd.Label + ".plist"
		l.StateDir = "/usr/local/var/vcpnode"
		l.LogDir = "/Library/Logs/vcpnode"
	default:
		l.UnitPath = filepath.Join(l.Home, "Library", "LaunchAgents", launchd.Label+".plist")
		l.LogDir = filepath.Join(l.Home, "Library", "Logs", "vcpnode")
	}
}

// configDirMode and configMode: the system service's user reads the config
// (it holds no key: that is in a 0600 file), a user's stays private.
func (l Layout) configDirMode() os.FileMode {
	if l.System {
		return 0o755
	}
	return 0o700
}

func (l Layout) configMode() os.FileMode {
	if l.System {
		return 0o644
	}
	return 0o600
}

// DefaultKeyFile is the key file a config made by `init` or `service
// install` points at: beside the config.
func (l Layout) DefaultKeyFile() string { return filepath.Join(filepath.Dir(l.Config), "key") }

// DefaultConfigPath is where a scope keeps its config when nothing says:
// the system's, or the user's under $XDG_CONFIG_HOME (else home/.config).
func DefaultConfigPath(goos string, system bool, getenv func(string) string, home string) string {
	switch {
	case system && goos == "darwin":
		return "/usr/local/etc/vcpnode/config.toml"
	case system:
		return "/etc/vcpnode/config.toml"
	}
	return filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", home, ".config"), "vcpnode", "config.toml")
}

// xdgDir is $name when it is absolute (the XDG rule), else home/fallback.
func xdgDir(getenv func(string) string, name, home, fallback string) string {
	if d := getenv(name); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, fallback)
}

// Binary is the executable a service runs: flag when given, else the
// running one (executable, e.g. os.Executable) with symlinks resolved,
// unless that is a temporary build of `go run`.
func Binary(executable func() (string, error), flag string) (string, error) {
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", fmt.Errorf("--binary %q: %w", flag, err)
		}
		return abs, nil
	}
	exe, err := executable()
	if err != nil {
		return "", fmt.Errorf("find this executable (pass --binary): %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("this vcpnode runs from Go's build cache (%s), which is removed after `go run`: build and install it first (scripts/install.sh), or pass --binary", exe)
	}
	return exe, nil
}
