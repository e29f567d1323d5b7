// Package service installs, starts, stops and removes vcpnode under the
// machine's service manager: a systemd unit on Linux, a launchd job on
// macOS, for the system (started at boot) or for one user (at login).
// Each command is a Plan, printed by a dry run and carried out otherwise;
// an install that fails halfway takes back what it did. The unit and plist
// texts are systemd's and launchd's packages'; the command line is the
// CLI's.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Op is a `service` command.
type Op int

// The commands.
const (
	Install Op = iota
	Uninstall
	Start
	Stop
	Status
)

// The service managers.
const (
	Systemd = "systemd"
	Launchd = "launchd"
)

// ErrNotRunning: Status found the service stopped or not loaded.
var ErrNotRunning = errors.New("the service is not running")

// Options are how a command runs.
type Options struct {
	// Purge: Uninstall also removes the config, its key file and the
	// state directory.
	Purge bool
	// DryRun prints what would be written and run, and changes nothing.
	DryRun bool
}

// Do carries out op for the service of layout l on h, printing each step
// on out. An install changes nothing it cannot finish: what would fail is
// refused first, and what still fails is undone.
func (h *Host) Do(ctx context.Context, out io.Writer, l Layout, op Op, o Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if l.Manager == Systemd && (op == Status || op == Start || op == Stop) {
		// One sentence instead of systemctl's "Failed to connect to bus"
		// followed by "not running".
		if why := h.ManagerProblem(l.System); why != nil {
			return fmt.Errorf("no service manager to ask: %w; `vcpnode status` asks the daemon itself", why)
		}
	}
	p, err := h.Plan(ctx, l, op, o.Purge)
	if err != nil {
		return err
	}
	if op == Install && !o.DryRun {
		if err := h.InstallProblem(l); err != nil {
			return fmt.Errorf("service install changed nothing: %w", err)
		}
	}
	r := &Runner{Out: out, Commands: h.Commands, FSRoot: h.FSRoot, DryRun: o.DryRun, UndoOnFailure: op == Install}
	if op == Install || op == Uninstall {
		r.Header = fmt.Sprintf("config %s (%s)", l.Config, l.ConfigFrom)
	}
	err = r.Execute(ctx, p)
	var exit interface{ ExitCode() int }
	if op == Status && errors.As(err, &exit) && exit.ExitCode() > 0 {
		return fmt.Errorf("%w (%s)", ErrNotRunning, err)
	}
	return err
}

// Plan is what op does for the service of layout l on h.
func (h *Host) Plan(ctx context.Context, l Layout, op Op, purge bool) (Plan, error) {
	switch l.Manager {
	case Systemd:
		return h.systemdPlan(l, op, purge)
	case Launchd:
		return h.launchdPlan(ctx, l, op, purge)
	}
	return nil, fmt.Errorf("service: no service manager %q", l.Manager)
}
