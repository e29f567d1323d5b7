package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// host is what `service` and `init` touch outside the process: the OS, the
// user, the executable, service-manager commands and the terminal. Tests
// replace it.
type host struct {
	goos       string
	euid       int
	executable func() (string, error)
	commands   commandRunner
	// fsRoot prefixes every path `service` reads or writes ("" = /).
	fsRoot string
	stdin  io.Reader
	// stdinIsTerminal says whether a person could type the key.
	stdinIsTerminal func() bool
	// readHidden prints prompt and reads a line without echoing it.
	readHidden func(prompt string) (string, error)
	// groupID is a group's id on this machine.
	groupID func(name string) (int, error)
}

func realHost() *host {
	return &host{
		goos:       runtime.GOOS,
		euid:       os.Geteuid(),
		executable: os.Executable,
		commands:   execRunner{},
		stdin:      os.Stdin,
		stdinIsTerminal: func() bool {
			fi, err := os.Stdin.Stat()
			return err == nil && fi.Mode()&os.ModeCharDevice != 0
		},
		readHidden: readHiddenLine,
		groupID:    lookupGroupID,
	}
}

// serviceFlags are the flags every `service` subcommand takes.
type serviceFlags struct {
	user, system, dryRun bool
	config, binary       string
}

func newServiceCmd(a *app, h *host) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install, start, stop or remove vcpnode as a systemd or launchd service",
		Long: "service manages vcpnode under the machine's service manager: systemd on Linux,\n" +
			"launchd on macOS. --system (the default as root) installs a system service that\n" +
			"starts at boot; --user (the default otherwise) a service of your own that starts\n" +
			"at login. --dry-run prints what would be written and run, and changes nothing.",
		Args: noSubcommand,
		RunE: helpAndFail,
	}
	var purge bool
	sub := []struct {
		use, short, long string
		op               serviceOp
	}{
		{"install", "Write the unit or plist, create a config if none exists, enable and (re)start the service",
			"install is safe to run again, e.g. after installing a new binary: it rewrites the\n" +
				"unit or plist, never an existing config, and restarts the service. It starts\n" +
				"the service only when the config names a key it can read.", opInstall},
		{"uninstall", "Stop and remove the service; --purge also removes its config, key and state", "", opUninstall},
		{"start", "Start the installed service", "", opStart},
		{"stop", "Stop the service (it starts again at the next boot or login)", "", opStop},
		{"status", "Show what the service manager says about the service", "", opStatus},
	}
	for _, s := range sub {
		var f serviceFlags
		c := &cobra.Command{
			Use:   s.use,
			Short: s.short,
			Long:  s.long,
			Args:  noArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				return a.runService(c.Context(), h, s.op, f, purge)
			},
		}
		c.Flags().BoolVar(&f.user, "user", false, "a service of the current user (default unless root)")
		c.Flags().BoolVar(&f.system, "system", false, "a system service (default as root)")
		c.Flags().BoolVar(&f.dryRun, "dry-run", false, "print what would be written and run; change nothing")
		c.Flags().StringVarP(&f.config, "config", "c", "", "config `FILE` (default: found as run finds it, $"+envConfig+", ~/.config/vcpnode/config.toml, /etc/vcpnode/config.toml as root, a user's never for a system service; else the scope's usual place)")
		if s.op == opInstall {
			c.Flags().StringVar(&f.binary, "binary", "", "the vcpnode executable `PATH` the service runs (default: this one)")
		}
		if s.op == opUninstall {
			c.Flags().BoolVar(&purge, "purge", false, "also remove the config, the key file next to it, and the state directory")
		}
		cmd.AddCommand(c)
	}
	return cmd
}

type serviceOp int

const (
	opInstall serviceOp = iota
	opUninstall
	opStart
	opStop
	opStatus
)

// errNotRunning: `service status` found the service stopped or not loaded.
var errNotRunning = errors.New("the service is not running")

func (a *app) runService(ctx context.Context, h *host, op serviceOp, f serviceFlags, purge bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Only install and a purge act on the config: a config question
	// must not keep anyone from stopping or removing a service.
	l, err := a.serviceLayout(h, f, op == opInstall, op == opInstall || (op == opUninstall && purge))
	if err != nil {
		return err
	}
	if l.manager == managerSystemd && (op == opStatus || op == opStart || op == opStop) {
		// One sentence instead of systemctl's "Failed to connect to bus"
		// followed by "not running".
		if why := a.serviceManagerProblem(h, l.system); why != nil {
			return fmt.Errorf("no service manager to ask: %w; `vcpnode status` asks the daemon itself", why)
		}
	}
	var p plan
	switch l.manager {
	case managerSystemd:
		p, err = a.systemdPlan(h, l, op, purge)
	case managerLaunchd:
		p, err = a.launchdPlan(ctx, h, l, op, purge)
	}
	if err != nil {
		return err
	}
	if op == opInstall && !f.dryRun {
		// All or nothing: what would fail is refused before any change,
		// and what still fails is undone (planRunner.undoOnFailure).
		if err := a.installProblem(h, l); err != nil {
			return fmt.Errorf("service install changed nothing: %w", err)
		}
	}
	r := &planRunner{out: a.stdout, commands: h.commands, fsRoot: h.fsRoot, dryRun: f.dryRun, undoOnFailure: op == opInstall}
	if op == opInstall || op == opUninstall {
		r.header = fmt.Sprintf("config %s (%s)", l.config, l.configFrom)
	}
	err = r.execute(ctx, p)
	var exit interface{ ExitCode() int }
	if op == opStatus && errors.As(err, &exit) && exit.ExitCode() > 0 {
		return fmt.Errorf("%w (%s)", errNotRunning, err)
	}
	return err
}

const (
	managerSystemd = "systemd"
	managerLaunchd = "launchd"
)

// serviceLayout is where one scope's service lives on this machine. The
// paths are as installed; host.fsRoot is applied only when touching them.
type serviceLayout struct {
	system  bool
	manager string
	home    string // the user's home; "" for the system scope
	binary  string // "" unless installing
	config  string
	// configFrom says how config was found, for the output.
	configFrom string
	unitPath   string // the systemd unit or launchd plist
	stateDir   string
	logDir     string // launchd only
}

// configDirMode and configMode: the system service's user reads the config
// (it holds no key: that is in a 0600 file), a user's stays private.
func (l serviceLayout) configDirMode() os.FileMode {
	if l.system {
		return 0o755
	}
	return 0o700
}

func (l serviceLayout) configMode() os.FileMode {
	if l.system {
		return 0o644
	}
	return 0o600
}

// defaultKeyFile is the key file a config made by `init` or `service
// install` points at: beside the config.
func (l serviceLayout) defaultKeyFile() string { return filepath.Join(filepath.Dir(l.config), "key") }

func (a *app) serviceLayout(h *host, f serviceFlags, installing, usesConfig bool) (serviceLayout, error) {
	if f.user && f.system {
		return serviceLayout{}, usageErrorf("--user and --system exclude each other")
	}
	l := serviceLayout{system: f.system || (!f.user && h.euid == 0)}
	switch h.goos {
	case "linux":
		l.manager = managerSystemd
	case "darwin":
		l.manager = managerLaunchd
	default:
		return l, fmt.Errorf("service: %s is not supported: vcpnode knows systemd (Linux) and launchd (macOS); run `vcpnode run` under your own supervisor", h.goos)
	}
	if !f.dryRun {
		switch {
		case l.system && h.euid != 0:
			return l, fmt.Errorf("a system service needs root: run it with sudo, or use --user for a service of your own (--dry-run shows what it would do)")
		case !l.system && h.euid == 0:
			return l, fmt.Errorf("--user as root would make a service of root's: run it as the user the node should run as, or use --system")
		}
	}
	var err error
	if !l.system {
		l.home = a.getenv("HOME")
		if !filepath.IsAbs(l.home) {
			return l, errors.New("$HOME is not set to an absolute path: the user service's files go under it")
		}
	}
	if l.config, l.configFrom, err = a.serviceConfig(h, f.config, l.system, usesConfig); err != nil {
		return l, err
	}
	l.fillPaths(a.getenv)
	if installing {
		if l.binary, err = serviceBinary(h, f.binary); err != nil {
			return l, err
		}
	}
	return l, nil
}

// fillPaths sets the unit, state and log paths of the layout's scope.
func (l *serviceLayout) fillPaths(getenv func(string) string) {
	switch {
	case l.manager == managerSystemd && l.system:
		l.unitPath = "/etc/systemd/system/vcpnode.service"
		l.stateDir = "/var/lib/vcpnode"
	case l.manager == managerSystemd:
		l.unitPath = filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", l.home, ".config"), "systemd", "user", "vcpnode.service")
		l.stateDir = filepath.Join(xdgDir(getenv, "XDG_STATE_HOME", l.home, ".local/state"), "vcpnode")
	case l.system:
		l.unitPath = "/Library/LaunchDaemons/" + launchdLabel + ".plist"
		l.stateDir = "/usr/local/var/vcpnode"
		l.logDir = "/Library/Logs/vcpnode"
	default:
		l.unitPath = filepath.Join(l.home, "Library", "LaunchAgents", launchdLabel+".plist")
		l.logDir = filepath.Join(l.home, "Library", "Logs", "vcpnode")
	}
}

// defaultConfigPath is where a scope keeps its config when nothing says.
func defaultConfigPath(goos string, system bool, getenv func(string) string, home string) string {
	switch {
	case system && goos == "darwin":
		return "/usr/local/etc/vcpnode/config.toml"
	case system:
		return "/etc/vcpnode/config.toml"
	}
	return filepath.Join(xdgDir(getenv, "XDG_CONFIG_HOME", home, ".config"), "vcpnode", "config.toml")
}

// serviceConfig is the config a service uses, found as run, config and
// the control commands find theirs (--config, $VCPNODE_CONFIG, then
// configCandidates, looked for on the host), else the scope's usual place,
// where install writes one; from says which. A system service never uses
// a file of the user's: as root, when that is the one run would find, it
// is refused when the config is used (strict: install, a purge) rather
// than silently passed over, and named otherwise.
func (a *app) serviceConfig(h *host, flag string, system, strict bool) (path, from string, err error) {
	if path, from = a.namedConfig(flag); path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", "", fmt.Errorf("config path %q: %w", path, err)
		}
		return abs, from, nil
	}
	systemPath := defaultConfigPath(h.goos, true, a.getenv, "")
	for _, p := range configCandidates(a.getenv, h.euid, systemPath) {
		if fi, err := os.Stat(filepath.Join(h.fsRoot, p)); err != nil || fi.IsDir() {
			continue
		}
		if mine := p != systemPath; system && mine {
			if h.euid != 0 {
				continue // root, who installs it, has another home
			}
			if !strict {
				path, err = a.scopeConfigPath(h, "", system)
				return path, "the system service's; not " + p + ", which vcpnode run would use", err
			}
			return "", "", fmt.Errorf("vcpnode run and config check use %s, which a system service cannot use (it runs as the vcpnode user); pass --config %s, or move the file there", p, systemPath)
		} else if !system && !mine {
			continue // a user service never uses the system's file
		}
		return p, "found where vcpnode run and config check look", nil
	}
	path, err = a.scopeConfigPath(h, "", system)
	return path, "none found; the usual place for this service", err
}

// scopeConfigPath is --config, else $VCPNODE_CONFIG, else the default of
// the scope, made absolute: where `init` writes a config (the service does
// not run in this directory).
func (a *app) scopeConfigPath(h *host, flag string, system bool) (string, error) {
	p, _ := a.namedConfig(flag)
	if p == "" {
		home := a.getenv("HOME")
		if !system && !filepath.IsAbs(home) {
			return "", errors.New("$HOME is not set to an absolute path: pass --config")
		}
		p = defaultConfigPath(h.goos, system, a.getenv, home)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("config path %q: %w", p, err)
	}
	return abs, nil
}

// xdgDir is $name when it is absolute (the XDG rule), else home/fallback.
func xdgDir(getenv func(string) string, name, home, fallback string) string {
	if d := getenv(name); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, fallback)
}

// serviceBinary is --binary, else this executable with symlinks resolved.
func serviceBinary(h *host, flag string) (string, error) {
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", fmt.Errorf("--binary %q: %w", flag, err)
		}
		return abs, nil
	}
	exe, err := h.executable()
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

// loadServiceConfig reads the config the service will use and says whether
// the service could start with it: a key it can read. It does not consult
// the environment, which the service will not have. content, when the
// config does not exist yet, is what the plan will write.
func loadServiceConfig(fsRoot, path string, content []byte) (cfg config.Config, keyProblem error, err error) {
	data, err := os.ReadFile(filepath.Join(fsRoot, path))
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = content
	case err != nil:
		return cfg, nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err = config.Parse(data, path, toolconfig.Check)
	if err != nil {
		return cfg, nil, fmt.Errorf("%w\nfix the config first (vcpnode config check --config %s)", err, path)
	}
	probe := cfg
	if probe.Hub.KeyFile != "" {
		probe.Hub.KeyFile = filepath.Join(fsRoot, probe.Hub.KeyFile)
	}
	_, keyProblem = probe.Key(func(string) string { return "" })
	if keyProblem != nil && fsRoot != "" {
		keyProblem = errors.New(strings.ReplaceAll(keyProblem.Error(), fsRoot, ""))
	}
	return cfg, keyProblem, nil
}
