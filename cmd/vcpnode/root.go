package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/service"
)

// envConfig names the config file when --config is not given.
const envConfig = "VCPNODE_CONFIG"

// configDefaultHelp is how --config is found when absent, for usage texts.
const configDefaultHelp = "default $" + envConfig + ", else ~/.config/vcpnode/config.toml, else /etc/vcpnode/config.toml as root"

// nodeRunner is what `run` needs from a node; *node.Node implements it.
type nodeRunner interface {
	Run(ctx context.Context) error
	Hurry()
}

// app holds what the commands touch outside themselves, so that tests can
// drive them with buffers, a fake environment and fake signals.
type app struct {
	stdout, stderr io.Writer
	// stdin is read by commands that take "-" for standard input, and by
	// `vcpnode mcp`; nil means os.Stdin.
	stdin io.Reader
	// stderrFile is the real stderr when there is one: it decides colours
	// and whether journald is listening.
	stderrFile *os.File
	getenv     func(string) string
	newNode    func(config.Config, zerolog.Logger, ...node.Option) (nodeRunner, error)
	// signals starts delivery of SIGINT and SIGTERM and returns a stop function.
	signals func() (<-chan os.Signal, func())

	logLevel, logFormat string      // persistent flags; "" means the config's
	logLines            *lineWriter // made by logOutput, from the command's goroutine

	// systemConfig is the system service's config, searched for root; ""
	// searches no system file (tests). euid is os.Geteuid when nil.
	systemConfig string
	euid         func() int
	// systemSocket is the system service's control socket: the default for
	// root, and where control commands look when the user's own is absent.
	// Tests point it into a temp dir, never at a real service.
	systemSocket string

	// prog is how the user ran vcpnode ("./vcpnode"), for the commands it
	// suggests; "" is "vcpnode".
	prog string
	// host is what `service` and `init` act on; nil is the real machine.
	host *host
	// helpErr is set when --help named a command that does not exist.
	helpErr error
	// mcpRefresh is how often `vcpnode mcp` rereads the daemon's tools;
	// 0 means mcpRefresh (tests make it short).
	mcpRefresh time.Duration
	// openURL opens a browser (`vcpnode console`); nil is xdg-open/open.
	openURL func(string) error
}

func newApp() *app {
	return &app{
		stdout:     os.Stdout,
		stderr:     os.Stderr,
		stderrFile: os.Stderr,
		getenv:     os.Getenv,
		// The place `vcpnode init` and `service install` use as root.
		systemConfig: service.DefaultConfigPath(runtime.GOOS, true, os.Getenv, ""),
		systemSocket: config.SystemControlSocket,
		newNode: func(cfg config.Config, log zerolog.Logger, opts ...node.Option) (nodeRunner, error) {
			return node.New(cfg, log, opts...)
		},
		signals: func() (<-chan os.Signal, func()) {
			ch := make(chan os.Signal, 2)
			signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
			return ch, func() { signal.Stop(ch) }
		},
	}
}

// noSubcommand refuses positional arguments, naming a likely command.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set lazily
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return &usageError{errors.New(msg)}
}

// noArgs is cobra.NoArgs as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%q takes no arguments (got %q)", cmd.CommandPath(), args[0])
	}
	return nil
}

// exactArgs is cobra.ExactArgs as a usage error that says what the n
// arguments are.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			noun := "arguments"
			if len(args) == 1 {
				noun = "argument"
			}
			return usageErrorf("%q takes %s, got %d %s", cmd.CommandPath(), what, len(args), noun)
		}
		return nil
	}
}

// helpAndFail is the action of commands that only group others.
func helpAndFail(cmd *cobra.Command, _ []string) error {
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help()
	return usageErrorf("%q needs a command", cmd.CommandPath())
}

// configPath is --config, else $VCPNODE_CONFIG, else the first file of
// configSearch that exists: the same for run, config, placeholders --local
// and the control commands.
func (a *app) configPath(flag string) (string, error) {
	if path := a.findConfig(flag); path != "" {
		return path, nil
	}
	msg := "no config file: pass --config FILE, set " + envConfig + ", or write one with vcpnode init"
	if paths := a.configSearch(); len(paths) > 0 {
		msg += " (looked for " + strings.Join(paths, " and ") + ")"
	}
	return "", usageErrorf("%s", msg)
}

// suggest is the command "sub" with the config at cfgPath as the user
// would type it next: the program as they ran it, and --config only when
// the command would not find that config by itself.
func (a *app) suggest(sub, cfgPath string) string {
	cmd := cmp.Or(a.prog, "vcpnode") + " " + sub
	if a.findConfig("") != cfgPath {
		cmd += " --config " + cfgPath
	}
	return cmd
}

// findConfig is configPath without the error: "" when nothing names or
// holds a config.
func (a *app) findConfig(flag string) string {
	if path, _ := a.namedConfig(flag); path != "" {
		return path
	}
	for _, p := range a.configSearch() {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// namedConfig is the file --config (flag), else $VCPNODE_CONFIG, names,
// and which of them named it; "" when neither does.
func (a *app) namedConfig(flag string) (path, from string) {
	if flag != "" {
		return flag, "from --config"
	}
	if env := a.getenv(envConfig); env != "" {
		return env, "from $" + envConfig
	}
	return "", ""
}

// configSearch is where a config is looked for when neither --config nor
// $VCPNODE_CONFIG names one: the file `vcpnode init` writes for this user
// ($XDG_CONFIG_HOME/vcpnode/config.toml, else ~/.config/…), then, for
// root, the system service's (a.systemConfig, which tests point elsewhere).
func (a *app) configSearch() []string {
	return configCandidates(a.getenv, a.geteuid(), a.systemConfig)
}

// configCandidates is configSearch's order for any machine (`service`
// asks it about its host): the user's file, then systemConfig for root.
func configCandidates(getenv func(string) string, euid int, systemConfig string) []string {
	var paths []string
	home, xdg := getenv("HOME"), getenv("XDG_CONFIG_HOME")
	if filepath.IsAbs(xdg) || filepath.IsAbs(home) {
		paths = append(paths, service.DefaultConfigPath("", false, getenv, home))
	}
	if systemConfig != "" && euid == 0 {
		paths = append(paths, systemConfig)
	}
	return paths
}

func (a *app) geteuid() int {
	if a.euid != nil {
		return a.euid()
	}
	return os.Geteuid()
}

// logSettings applies the --log-* flags over the config's [log] table.
func (a *app) logSettings(cfg config.LogConfig) (config.LogConfig, error) {
	if a.logLevel != "" {
		if !slices.Contains(config.LogLevels, a.logLevel) {
			return cfg, usageErrorf("--log-level %q is not one of %s", a.logLevel, strings.Join(config.LogLevels, ", "))
		}
		cfg.Level = a.logLevel
	}
	if a.logFormat != "" {
		if !slices.Contains(config.LogFormats, a.logFormat) {
			return cfg, usageErrorf("--log-format %q is not one of %s", a.logFormat, strings.Join(config.LogFormats, ", "))
		}
		cfg.Format = a.logFormat
	}
	return cfg, nil
}

// logger builds the process's logger from the config and flags.
func (a *app) logger(cfg config.LogConfig) (zerolog.Logger, error) {
	cfg, err := a.logSettings(cfg)
	if err != nil {
		return zerolog.Nop(), err
	}
	return newLogger(a.logOutput(), cfg, detectOutput(a.stderrFile, a.getenv))
}

// logOutput is where every logger of this app writes: stderr, through one
// lineWriter, which flushLogs empties.
func (a *app) logOutput() io.Writer {
	if a.logLines == nil {
		a.logLines = newLineWriter(a.stderr)
	}
	return a.logLines
}

// flushLogs waits until the log lines written so far are out.
func (a *app) flushLogs() {
	if a.logLines != nil {
		a.logLines.flush()
	}
}

// progName is the program as a command suggested to the user should name
// it: a relative path as they typed it ("./vcpnode", "bin/vcpnode"),
// otherwise "vcpnode" (found on PATH, or an absolute path such as go
// run's temporary build).
func progName(arg0 string) string {
	if strings.ContainsRune(arg0, filepath.Separator) && !filepath.IsAbs(arg0) {
		return arg0
	}
	return "vcpnode"
}
