package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
)

// Environment a service manager sets for the sd_notify protocol.
const (
	envNotifySocket = "NOTIFY_SOCKET"
	envWatchdogUsec = "WATCHDOG_USEC"
	envWatchdogPID  = "WATCHDOG_PID"
)

// Notifier tells systemd what the daemon is doing (sd_notify(3)): READY=1
// once it serves, RELOADING=1 and READY=1 around a reload, STOPPING=1 on
// shutdown, and WATCHDOG=1 pings when the unit sets WatchdogSec=. Without
// $NOTIFY_SOCKET (not started by systemd with Type=notify) every method does
// nothing, and a nil *Notifier is valid too. Safe for concurrent use.
type Notifier struct {
	socket   string
	watchdog time.Duration
	log      zerolog.Logger
	// afterPing, when set, learns each watchdog ping's outcome (tests).
	afterPing func(error)
}

// New reads $NOTIFY_SOCKET and the watchdog settings through getenv.
// A malformed setting is an error: the unit and the daemon disagree, and
// systemd would kill a daemon that never reports.
func New(getenv func(string) string, log zerolog.Logger) (*Notifier, error) {
	n := &Notifier{socket: getenv(envNotifySocket), log: log}
	if n.socket != "" && !strings.HasPrefix(n.socket, "/") && !strings.HasPrefix(n.socket, "@") {
		return nil, fmt.Errorf("%s=%q: only a socket path or an abstract @name is supported", envNotifySocket, n.socket)
	}
	usec := getenv(envWatchdogUsec)
	if usec == "" || n.socket == "" {
		return n, nil
	}
	if pid := getenv(envWatchdogPID); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return n, nil // meant for another process of the service
	}
	v, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || v <= 0 {
		return nil, fmt.Errorf("%s=%q: want a positive number of microseconds", envWatchdogUsec, usec)
	}
	n.watchdog = time.Duration(v) * time.Microsecond
	return n, nil
}

// Enabled reports whether a service manager is listening.
func (n *Notifier) Enabled() bool { return n != nil && n.socket != "" }

// WatchdogInterval is the unit's WatchdogSec=, or 0 when it has none.
func (n *Notifier) WatchdogInterval() time.Duration {
	if !n.Enabled() {
		return 0
	}
	return n.watchdog
}

// Ready says the daemon serves; status is shown by `systemctl status`.
func (n *Notifier) Ready(status string) error {
	return n.send(daemon.SdNotifyReady + statusLine(status))
}

// Reloading says a reload began; call Ready when it ends, whatever its
// outcome. MONOTONIC_USEC lets systemd ≥ 253 match it to its own reload
// request (Type=notify-reload needs it; Type=notify accepts it).
func (n *Notifier) Reloading() error {
	return n.send(daemon.SdNotifyReloading + "\n" + strings.TrimSuffix(daemon.SdNotifyMonotonicUsec(), "\n"))
}

// Stopping says shutdown began, so systemd does not mistake it for a crash.
func (n *Notifier) Stopping(status string) error {
	return n.send(daemon.SdNotifyStopping + statusLine(status))
}

// Status updates the free-form status line alone.
func (n *Notifier) Status(status string) error {
	return n.send(strings.TrimPrefix(statusLine(status), "\n"))
}

// RunWatchdog pings the watchdog at half its interval until ctx ends. It
// returns at once when the unit has no watchdog. A failed ping is logged
// (once until a ping succeeds again) and retried on the next tick.
func (n *Notifier) RunWatchdog(ctx context.Context) {
	interval := n.WatchdogInterval()
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval / 2)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			err := n.send(daemon.SdNotifyWatchdog)
			switch {
			case err != nil && !failing:
				n.log.Warn().Err(err).Msg("systemd watchdog ping failed; systemd may restart the service")
			case err == nil && failing:
				n.log.Info().Msg("systemd watchdog pings work again")
			}
			failing = err != nil
			if n.afterPing != nil {
				n.afterPing(err)
			}
		}
	}
}

// ErrNotifyTooLong means a notification did not fit in one datagram write.
var ErrNotifyTooLong = errors.New("notification was truncated")

// send delivers one notification. A failure is logged here, so that
// callers with nothing better to do may ignore the error.
func (n *Notifier) send(state string) error {
	if !n.Enabled() {
		return nil
	}
	err := n.write(state)
	if err != nil && state != daemon.SdNotifyWatchdog { // RunWatchdog reports its own
		n.log.Warn().Err(err).Str("state", strings.ReplaceAll(state, "\n", " ")).Msg("could not notify systemd")
	}
	return err
}

func (n *Notifier) write(state string) error {
	// A name starting with @ is an abstract socket; net maps it itself.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	defer conn.Close()
	written, err := conn.Write([]byte(state))
	if err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	if written != len(state) {
		return fmt.Errorf("notify systemd: %w (%d of %d bytes)", ErrNotifyTooLong, written, len(state))
	}
	return nil
}

// statusLine is "\nSTATUS=…" with line breaks flattened and keys
// redacted, or "".
func statusLine(status string) string {
	if status == "" {
		return ""
	}
	return "\nSTATUS=" + config.Redact(strings.Join(strings.Fields(status), " "))
}
