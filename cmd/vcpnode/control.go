package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/humantext"
)

// controlTimeout bounds every request but a local call, which the tool's own
// timeout bounds.
const controlTimeout = 30 * time.Second

// getuid picks the default socket; tests replace it.
var getuid = os.Getuid

// controlFlags are the flags every control command has.
type controlFlags struct {
	socket string
	config string
	json   bool
}

func (f *controlFlags) add(cmd *cobra.Command, withJSON bool) {
	cmd.Flags().StringVar(&f.socket, "socket", "", "the daemon's control socket `PATH` (default: [control] socket of the config, else where 'vcpnode run' listens by default)")
	cmd.Flags().StringVarP(&f.config, "config", "c", "", "config `FILE` whose [control] socket to use ("+configDefaultHelp+")")
	if withJSON {
		cmd.Flags().BoolVar(&f.json, "json", false, "print the daemon's answer as JSON")
	}
}

// controlSocket finds the daemon's socket: --socket, else [control] socket
// of --config or $VCPNODE_CONFIG, else the default for this user. A user
// whose own default does not exist is pointed at the system service's
// socket when that one exists.
func (a *app) controlSocket(f *controlFlags) (string, error) {
	if f.socket != "" {
		return f.socket, nil
	}
	if path := a.findConfig(f.config); path != "" {
		sock, err := config.ReadControlSocket(path)
		if err != nil {
			return "", fmt.Errorf("%w (or pass --socket PATH)", err)
		}
		if sock != "" {
			return sock, nil
		}
	}
	sock := a.defaultSocket()
	if _, err := os.Stat(sock); err != nil {
		if _, err := os.Stat(a.systemSocket); err == nil {
			return a.systemSocket, nil
		}
	}
	return sock, nil
}

// defaultSocket is config.DefaultControlSocket with the system service's
// socket replaced by a.systemSocket (tests point it into a temp dir).
func (a *app) defaultSocket() string {
	sock := config.DefaultControlSocket(a.getenv, getuid())
	if sock == config.SystemControlSocket {
		return a.systemSocket
	}
	return sock
}

// controlClient is a client for the daemon, and a context for one request
// made from ctx (a command's, which may be nil).
func (a *app) controlClient(ctx context.Context, f *controlFlags, timeout time.Duration) (*controlapi.ControlClient, context.Context, func(), error) {
	sock, err := a.controlSocket(f)
	if err != nil {
		return nil, nil, nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cancel := func() {}
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	c := controlapi.NewControlClient(sock)
	return c, ctx, func() { cancel(); c.Close() }, nil
}

// askDaemon is the shape of every control command: reach the daemon, make
// one request, and print the answer as JSON (--json) or for people.
func askDaemon[T any](a *app, cmd *cobra.Command, f *controlFlags,
	request func(*controlapi.ControlClient, context.Context) (T, error), human func(io.Writer, T) error) error {
	c, ctx, done, err := a.controlClient(cmd.Context(), f, controlTimeout)
	if err != nil {
		return err
	}
	defer done()
	res, err := request(c, ctx)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(a.stdout, res)
	}
	return human(a.stdout, res)
}

// queryCmd completes cmd (its Use and texts) as a command that takes no
// arguments and asks the daemon one question: request, printed by human or,
// with --json, as JSON.
func queryCmd[T any](a *app, cmd *cobra.Command,
	request func(*controlapi.ControlClient, context.Context) (T, error), human func(io.Writer, T) error) *cobra.Command {
	var f controlFlags
	cmd.Args = noArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return askDaemon(a, cmd, &f, request, human) }
	f.add(cmd, true)
	return cmd
}

// writeJSON prints v indented, as every --json output is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// ctlAge writes a duration as people read it: "250ms", "4.2s", "2m", "3h12m5s".
func ctlAge(d time.Duration) string {
	return humantext.Duration(max(d, 0))
}

// ctlClip flattens s to one line of at most width runes.
func ctlClip(s string, width int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	if r := []rune(s); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}

// ctlCompletion asks the daemon for completions; when it is not running
// there are none, and the shell offers no file names instead.
func (a *app) ctlCompletion(f *controlFlags, list func(context.Context, *controlapi.ControlClient) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, ctx, done, err := a.controlClient(cmd.Context(), f, 5*time.Second)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer done()
		names, err := list(ctx, c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// hangupSignals delivers SIGHUP to `vcpnode run`, which reloads its config.
var hangupSignals = func() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// daemonControl is what `vcpnode run` starts beside the node: the control
// socket and the metrics endpoint.
type daemonControl struct {
	reload func() // SIGHUP
	stop   func()
}

// daemonNode is a node that the control socket and the metrics endpoint
// can serve: the real one; tests' fakes of nodeRunner are not.
type daemonNode interface {
	control.Backend
	control.MetricsSource
}

// startControl listens on the control socket (before the node connects, so
// that `vcpnode status` answers from the start) and, when configured,
// serves metrics. A node that is no daemonNode (tests' fakes) gets neither.
func (a *app) startControl(ctx context.Context, n nodeRunner, cfg config.Config, configFile, socket string, log zerolog.Logger) (*daemonControl, error) {
	real, ok := n.(daemonNode)
	if !ok {
		return &daemonControl{
			reload: func() { log.Warn().Msg("SIGHUP ignored: this node cannot reload") },
			stop:   func() {},
		}, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if socket == "" {
		socket = cfg.Control.Socket
	}
	if socket == "" {
		socket = a.defaultSocket()
	}
	var toolProcess func(pid int) bool // a tool's process may not change the daemon
	if tp, ok := n.(interface{ ToolProcess(pid int) bool }); ok {
		toolProcess = tp.ToolProcess
	}
	cs, err := control.Listen(ctx, real, control.Options{
		Socket: socket, ConfigFile: configFile, Version: currentBuild().Version, Group: cfg.Control.Group,
		ToolProcess: toolProcess, Log: log,
	})
	if err != nil {
		return nil, err
	}
	ms, err := control.ListenMetrics(real, cfg.Metrics, log)
	if err != nil {
		cs.Close(ctx)
		return nil, err
	}
	if ms != nil {
		cs.SetMetricsAddr(ms.Addr())
	}
	con, err := control.ListenConsole(cs, cfg.Console, log)
	if err != nil {
		if ms != nil {
			ms.Close(ctx)
		}
		cs.Close(ctx)
		return nil, err
	}
	return &daemonControl{
		reload: func() {
			rep, err := real.ReloadFile(configFile)
			if err != nil {
				return // ReloadFile logged it; the old config stays
			}
			log.Info().Str("signal", "hangup").Strs("changed", rep.Changed).Bool("reconnected", rep.Reconnected).
				Strs("restart_needed", rep.RestartNeeded).Msg("config reloaded on SIGHUP")
		},
		stop: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := cs.Close(ctx); err != nil {
				log.Warn().Err(err).Msg("control socket: requests still open at exit were cut off")
			}
			if ms != nil {
				ms.Close(ctx)
			}
			if con != nil {
				con.Close(ctx)
			}
		},
	}, nil
}
