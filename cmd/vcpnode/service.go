package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/service"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// host is what `service` and `init` touch outside the process: the OS, the
// user, the executable, service-manager commands and the terminal. Tests
// replace it.
type host struct {
	goos       string
	euid       int
	executable func() (string, error)
	commands   service.CommandRunner
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
		commands:   service.ExecRunner{},
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
		op               service.Op
	}{
		{"install", "Write the unit or plist, create a config if none exists, enable and (re)start the service",
			"install is safe to run again, e.g. after installing a new binary: it rewrites the\n" +
				"unit or plist, never an existing config, and restarts the service. It starts\n" +
				"the service only when the config names a key it can read.", service.Install},
		{"uninstall", "Stop and remove the service; --purge also removes its config, key and state", "", service.Uninstall},
		{"start", "Start the installed service", "", service.Start},
		{"stop", "Stop the service (it starts again at the next boot or login)", "", service.Stop},
		{"status", "Show what the service manager says about the service", "", service.Status},
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
		if s.op == service.Install {
			c.Flags().StringVar(&f.binary, "binary", "", "the vcpnode executable `PATH` the service runs (default: this one)")
		}
		if s.op == service.Uninstall {
			c.Flags().BoolVar(&purge, "purge", false, "also remove the config, the key file next to it, and the state directory")
		}
		cmd.AddCommand(c)
	}
	return cmd
}

// serviceHost is the service library's view of h.
func (a *app) serviceHost(h *host) *service.Host {
	return &service.Host{GOOS: h.goos, EUID: h.euid, Commands: h.commands, FSRoot: h.fsRoot, Getenv: a.getenv,
		ConfigChecks: []config.Check{toolconfig.Check}}
}

func (a *app) runService(ctx context.Context, h *host, op service.Op, f serviceFlags, purge bool) error {
	// Only install and a purge act on the config: a config question
	// must not keep anyone from stopping or removing a service.
	l, err := a.serviceLayout(h, f, op == service.Install, op == service.Install || (op == service.Uninstall && purge))
	if err != nil {
		return err
	}
	if op == service.Install {
		if l.NewConfig, err = serviceConfigContent(l); err != nil {
			return err
		}
	}
	return a.serviceHost(h).Do(ctx, a.stdout, l, op, service.Options{Purge: purge, DryRun: f.dryRun})
}

func (a *app) serviceLayout(h *host, f serviceFlags, installing, usesConfig bool) (service.Layout, error) {
	if f.user && f.system {
		return service.Layout{}, usageErrorf("--user and --system exclude each other")
	}
	system := f.system || (!f.user && h.euid == 0)
	l, err := a.serviceHost(h).NewLayout(system, f.dryRun)
	if err != nil {
		return l, err
	}
	if l.Config, l.ConfigFrom, err = a.serviceConfig(h, f.config, l.System, usesConfig); err != nil {
		return l, err
	}
	if installing {
		if l.Binary, err = service.Binary(h.executable, f.binary); err != nil {
			return l, err
		}
	}
	return l, nil
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
	systemPath := service.DefaultConfigPath(h.goos, true, a.getenv, "")
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
		p = service.DefaultConfigPath(h.goos, system, a.getenv, home)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("config path %q: %w", p, err)
	}
	return abs, nil
}

// serviceConfigContent is the config install writes when there is none:
// the example, with hub.key_file pointing beside it.
func serviceConfigContent(l service.Layout) ([]byte, error) {
	text, err := exampleConfig(configValues{KeyFile: l.DefaultKeyFile()},
		"Written by `vcpnode service install` from config.example.toml. Set hub.url and\n"+
			"hub.name, put the key in hub.key_file (chmod 600), then check it with:\n"+
			"  vcpnode config check --config "+l.Config)
	return []byte(text), err
}
