package sdnotify

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

// fakeNotifySocket is systemd's end of NOTIFY_SOCKET: a unixgram socket.
type fakeNotifySocket struct {
	path string
	conn *net.UnixConn
}

func newFakeNotifySocket(t *testing.T) *fakeNotifySocket {
	t.Helper()
	path := testnet.SocketPath(t)
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fakeNotifySocket{path: path, conn: conn}
}

// next returns the next datagram; the deadline only turns a hang into a failure.
func (f *fakeNotifySocket) next(t *testing.T) string {
	t.Helper()
	if err := f.conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _, err := f.conn.ReadFromUnix(buf)
	if err != nil {
		t.Fatalf("no notification arrived: %v", err)
	}
	return string(buf[:n])
}

func notifierFor(t *testing.T, env map[string]string) (*Notifier, *testlog.Buffer) {
	t.Helper()
	log := &testlog.Buffer{}
	n, err := New(envOf(env), zerolog.New(log))
	if err != nil {
		t.Fatal(err)
	}
	return n, log
}

func TestNotifierSendsTheProtocol(t *testing.T) {
	sock := newFakeNotifySocket(t)
	n, _ := notifierFor(t, map[string]string{envNotifySocket: sock.path})
	if !n.Enabled() {
		t.Fatal("Enabled() = false with NOTIFY_SOCKET set")
	}
	tests := []struct {
		name string
		send func() error
		want string
	}{
		{"ready", func() error { return n.Ready("connecting to ws://h:1") }, "READY=1\nSTATUS=connecting to ws://h:1"},
		{"ready without status", func() error { return n.Ready("") }, "READY=1"},
		{"status flattened", func() error { return n.Status("two\nlines") }, "STATUS=two lines"},
		{"stopping", func() error { return n.Stopping("shutting down") }, "STOPPING=1\nSTATUS=shutting down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.send(); err != nil {
				t.Fatal(err)
			}
			if got := sock.next(t); got != tt.want {
				t.Errorf("sent %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNotifierReloadingCarriesTheMonotonicClock(t *testing.T) {
	sock := newFakeNotifySocket(t)
	n, _ := notifierFor(t, map[string]string{envNotifySocket: sock.path})
	var last int64
	for range 2 {
		if err := n.Reloading(); err != nil {
			t.Fatal(err)
		}
		got := sock.next(t)
		lines := strings.Split(got, "\n")
		if len(lines) != 2 || lines[0] != "RELOADING=1" || !strings.HasPrefix(lines[1], "MONOTONIC_USEC=") {
			t.Fatalf("sent %q, want RELOADING=1 and MONOTONIC_USEC=", got)
		}
		usec, err := strconv.ParseInt(strings.TrimPrefix(lines[1], "MONOTONIC_USEC="), 10, 64)
		if err != nil || usec <= 0 || usec < last {
			t.Fatalf("MONOTONIC_USEC in %q is not a growing positive number (previous %d)", got, last)
		}
		last = usec
	}
}

func TestNotifierWithoutSocketDoesNothing(t *testing.T) {
	var nilNotifier *Notifier
	n, _ := notifierFor(t, map[string]string{envWatchdogUsec: "1000000"})
	for _, x := range []*Notifier{nilNotifier, n} {
		if x.Enabled() || x.WatchdogInterval() != 0 {
			t.Errorf("%v: Enabled() or WatchdogInterval() set without NOTIFY_SOCKET", x)
		}
		for _, err := range []error{x.Ready("r"), x.Reloading(), x.Stopping("s"), x.Status("x")} {
			if err != nil {
				t.Errorf("send without a socket: %v", err)
			}
		}
		x.RunWatchdog(context.Background()) // returns at once: no watchdog
	}
}

func TestNewNotifierSettings(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	tests := []struct {
		name     string
		env      map[string]string
		watchdog time.Duration
		errText  string
	}{
		{"watchdog", map[string]string{envNotifySocket: "/run/n", envWatchdogUsec: "30000000", envWatchdogPID: self}, 30 * time.Second, ""},
		{"watchdog without pid", map[string]string{envNotifySocket: "@abstract", envWatchdogUsec: "500000"}, 500 * time.Millisecond, ""},
		{"watchdog of another process", map[string]string{envNotifySocket: "/run/n", envWatchdogUsec: "30000000", envWatchdogPID: "1"}, 0, ""},
		{"bad watchdog", map[string]string{envNotifySocket: "/run/n", envWatchdogUsec: "soon"}, 0, "WATCHDOG_USEC"},
		{"zero watchdog", map[string]string{envNotifySocket: "/run/n", envWatchdogUsec: "0"}, 0, "positive"},
		{"vsock", map[string]string{envNotifySocket: "vsock:2:1234"}, 0, "NOTIFY_SOCKET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := New(envOf(tt.env), zerolog.Nop())
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("New() error = %v, want one mentioning %s", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := n.WatchdogInterval(); got != tt.watchdog {
				t.Errorf("WatchdogInterval() = %v, want %v", got, tt.watchdog)
			}
		})
	}
}

func TestRunWatchdogPingsUntilCancelled(t *testing.T) {
	sock := newFakeNotifySocket(t)
	n, _ := notifierFor(t, map[string]string{envNotifySocket: sock.path, envWatchdogUsec: "20000"}) // 20ms: pings every 10ms
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.RunWatchdog(ctx)
	}()
	for range 3 {
		if got := sock.next(t); got != "WATCHDOG=1" {
			t.Fatalf("sent %q, want WATCHDOG=1", got)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunWatchdog did not return after its context ended")
	}
}

func TestRunWatchdogLogsAFailingPingOnce(t *testing.T) {
	sock := newFakeNotifySocket(t)
	n, log := notifierFor(t, map[string]string{envNotifySocket: sock.path, envWatchdogUsec: "2000"})
	pings := make(chan error)
	n.afterPing = func(err error) { pings <- err }
	sock.conn.Close() // systemd went away: every ping fails
	os.Remove(sock.path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.RunWatchdog(ctx)
	}()
	for range 4 {
		if err := <-pings; err == nil {
			t.Fatal("a ping to a closed socket succeeded")
		}
	}
	cancel()
	// A ping may race with the cancellation: take it until RunWatchdog returns.
	for stopped := false; !stopped; {
		select {
		case <-pings:
		case <-done:
			stopped = true
		}
	}
	if c := strings.Count(log.String(), "watchdog ping failed"); c != 1 {
		t.Errorf("four failures were logged %d times, want once:\n%s", c, log)
	}
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
