package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/inheritfd"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/sdnotify"
	"github.com/vcpnode/vcpnode/toolconfig"
)

func newRunCmd(a *app) *cobra.Command {
	var configFlag, socketFlag string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Connect to the main server and serve tools until stopped",
		Long: "run loads the config, connects to the main server and serves tools until SIGINT or\n" +
			"SIGTERM. The first signal shuts down gracefully (in-flight calls get\n" +
			"node.shutdown_grace to finish); a second one cuts the grace period short.\n" +
			"SIGHUP re-reads the config file, like `vcpnode reload`. The control socket\n" +
			"(`vcpnode status` and the other commands) answers before the node connects.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Catch signals from the start: one that arrives while starting
			// then stops the node gracefully instead of killing the process.
			sigs, stop := a.signals()
			defer stop()
			hups, stopHups := hangupSignals()
			defer stopHups()
			// $VCPNODE_KEY is read once and removed from the environment,
			// where plugins (same user) could read it; reloads use the copy.
			getenv, keyErr := a.takeEnvKey()
			path, err := a.configPath(configFlag)
			if err != nil {
				return err
			}
			cfg, err := config.Load(path, toolconfig.Check)
			if err != nil {
				return err
			}
			log, err := a.logger(cfg.Log)
			if err != nil {
				return err
			}
			// The config's other warnings are the node's: it logs them.
			for _, w := range config.PermissionWarnings(path, cfg) {
				log.Warn().Msg(w)
			}
			// Before the node starts its first plugin.
			keepInheritedLogged(log)
			if keyErr != nil {
				log.Warn().Err(keyErr).Msg("$" + config.EnvKey + " may still be readable in /proc/<pid>/environ; prefer hub.key_file or a systemd credential")
			}
			// systemd's Type=notify protocol; without $NOTIFY_SOCKET it does nothing.
			notifier, err := sdnotify.New(a.getenv, log)
			if err != nil {
				return err
			}
			n, err := a.newNode(cfg, log, node.WithProtectedFiles(a.protectedFiles(path)...), node.WithNotifier(notifier), node.WithGetenv(getenv), node.WithVersion(currentBuild().Version))
			if err != nil {
				return err
			}
			log.Info().Str("config", path).Str("version", currentBuild().Version).Msg("starting")
			ctl, err := a.startControl(cmd.Context(), n, cfg, absPath(path), socketFlag, log) // control.go
			if err != nil {
				return err
			}
			defer ctl.stop()
			defer notifyServiceManager(cmd.Context(), notifier, n)() // service_notify.go: READY, STATUS, STOPPING, watchdog
			return a.serveWith(cmd.Context(), n, log, sigs, hups, ctl.reload)
		},
	}
	cmd.Flags().StringVarP(&configFlag, "config", "c", "", "config `FILE` ("+configDefaultHelp+")")
	cmd.Flags().StringVar(&socketFlag, "socket", "", "control socket `PATH` (default: [control] socket, else $XDG_RUNTIME_DIR/vcpnode.sock, or /run/vcpnode/vcpnode.sock for root and systemd)")
	return cmd
}

// errStoppedUnasked: Run returned before any signal asked it to.
var errStoppedUnasked = errors.New("node stopped without being asked to")

// serve runs n until it stops. The first signal on sigs cancels its context
// (graceful shutdown); later ones call Hurry. It returns nil after a
// graceful shutdown.
func (a *app) serve(ctx context.Context, n nodeRunner, log zerolog.Logger, sigs <-chan os.Signal) error {
	return a.serveWith(ctx, n, log, sigs, nil, nil)
}

// serveWith is serve where each signal on hups (SIGHUP) calls reload. The
// reloads run on a goroutine of their own, one at a time, so that a slow
// one (a plugin scan, a direct plugin starting) never delays the handling
// of SIGTERM; SIGHUPs that arrive during a reload are folded into one more.
func (a *app) serveWith(ctx context.Context, n nodeRunner, log zerolog.Logger, sigs, hups <-chan os.Signal, reload func()) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	reloads := make(chan struct{}, 1)
	reloaderDone := make(chan struct{})
	go func() {
		defer close(reloaderDone)
		for {
			select {
			case <-reloads:
				reload()
			case <-ctx.Done():
				return
			}
		}
	}()
	// A reload under way finishes before run returns: it is bounded, and
	// nothing may outlive the command.
	defer func() { cancel(); <-reloaderDone }()

	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()

	received := 0
	for {
		select {
		case err := <-done:
			switch {
			case err != nil:
				return fmt.Errorf("node: %w", err)
			case ctx.Err() == nil:
				return errStoppedUnasked
			}
			return nil
		case sig := <-sigs:
			received++
			if received == 1 {
				log.Info().Str("signal", sig.String()).Msg("shutting down gracefully; send the signal again to stop without waiting")
				cancel()
				continue
			}
			log.Warn().Str("signal", sig.String()).Msg("signal received again: cutting the shutdown grace period short")
			n.Hurry()
		case <-hups:
			select {
			case reloads <- struct{}{}:
			default: // one is already queued: it will read the newest file
			}
		}
	}
}

// takeEnvKey takes $VCPNODE_KEY out of the process environment
// (config.TakeEnvKey) and returns a lookup that still answers it, from the
// app's own environment as it was.
func (a *app) takeEnvKey() (func(string) string, error) {
	key := a.getenv(config.EnvKey)
	_, err := config.TakeEnvKey()
	return func(name string) string {
		if name == config.EnvKey {
			return key
		}
		return a.getenv(name)
	}, err
}

// protectedFiles are the node's own files its config does not name: the
// config file (it may sit inside a file root or a granted tree) and the
// systemd credential. No tool or command may read them.
func (a *app) protectedFiles(configPath string) []string {
	return []string{absPath(configPath), config.CredentialPath(a.getenv)}
}

// absPath is path made absolute, else path as it is.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// keepInheritedLogged is inheritfd.KeepFromChildren for a command that
// starts a node: a failure is worth a warning, not a refusal to run.
func keepInheritedLogged(log zerolog.Logger) {
	if err := inheritfd.KeepFromChildren(); err != nil {
		log.Warn().Err(err).Msg("cannot keep the file descriptors vcpnode inherited from the processes it starts")
	}
}
