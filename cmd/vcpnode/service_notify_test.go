package main

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/node"
)

// notifyListener is systemd's end of $NOTIFY_SOCKET.
type notifyListener struct {
	path string
	got  chan string
	wg   sync.WaitGroup
	conn *net.UnixConn
}

func listenNotify(t *testing.T) *notifyListener {
	t.Helper()
	l := &notifyListener{path: testnet.SocketPath(t), got: make(chan string, 1024)}
	var err error
	l.conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: l.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	l.wg.Go(func() {
		defer close(l.got)
		buf := make([]byte, 4096)
		for {
			n, _, err := l.conn.ReadFromUnix(buf)
			if err != nil {
				return // closed by the test
			}
			select {
			case l.got <- string(buf[:n]):
			default: // watchdog pings the test no longer reads
			}
		}
	})
	t.Cleanup(func() {
		l.conn.Close()
		l.wg.Wait()
	})
	return l
}

// expect skips notifications until one starts with prefix, and returns it;
// seen collects everything read.
func (l *notifyListener) expect(t *testing.T, ctx context.Context, prefix string, seen *[]string) string {
	t.Helper()
	for {
		select {
		case m, ok := <-l.got:
			if !ok {
				t.Fatalf("the notify socket closed while waiting for %q; got %q", prefix, notWatchdog(*seen))
			}
			*seen = append(*seen, m)
			if strings.HasPrefix(m, prefix) {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("no %q notification; got %q", prefix, notWatchdog(*seen))
		}
	}
}

// notWatchdog leaves the pings out of a failure message.
func notWatchdog(seen []string) []string {
	var out []string
	for _, m := range seen {
		if m != "WATCHDOG=1" {
			out = append(out, m)
		}
	}
	return out
}

// TestRunNotifiesSystemd runs `vcpnode run` with the real node under a fake
// systemd: READY once the first attempt began, STATUS as the connection
// changes, watchdog pings, RELOADING/READY around a reload, STOPPING at
// shutdown, and never the key.
func TestRunNotifiesSystemd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hub, err := demohub.Start(demohub.Options{Key: ctlTestKey})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	hub.RefuseHandshakes(-1)
	sd := listenNotify(t)
	sock := testnet.SocketPath(t)
	path := writeFile(t, "config.toml", testHubConfig(hub, ""), 0o600)

	ta := newTestApp(t)
	ta.newNode = newApp().newNode // the real node
	ta.env["NOTIFY_SOCKET"] = sd.path
	ta.env["WATCHDOG_USEC"] = "40000"
	exit := startRun(ta, "--config", path, "--socket", sock, "--log-format", "json")

	base := "ws://" + strings.TrimPrefix(hub.BaseURL(), "http://")
	var seen []string
	// READY comes once the first attempt began (it, and on a loaded machine
	// the next ones, may have failed already), and after the control socket
	// listens.
	ready := sd.expect(t, ctx, "READY=1", &seen)
	if !strings.HasPrefix(ready, "READY=1\nSTATUS=connecting to "+base) && !strings.HasPrefix(ready, "READY=1\nSTATUS=disconnected from "+base+", retrying (attempt ") {
		t.Errorf("first READY = %q", ready)
	}
	pollStatus(t, ctx, sock, "the control socket", func(controlapi.StatusResponse) bool { return true })
	sd.expect(t, ctx, "WATCHDOG=1", &seen)

	hub.RefuseHandshakes(0)
	c := controlapi.NewControlClient(sock)
	defer c.Close()
	if _, err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	sd.expect(t, ctx, "STATUS=connected to "+base, &seen)

	// A reload through the control socket (what ExecReload does).
	if _, err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	reloading := sd.expect(t, ctx, "RELOADING=1", &seen)
	if !strings.HasPrefix(reloading, "RELOADING=1\nMONOTONIC_USEC=") {
		t.Errorf("RELOADING = %q, want MONOTONIC_USEC with it", reloading)
	}
	sd.expect(t, ctx, "READY=1", &seen)
	// A SIGHUP reload too.
	if err := signalSelf(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	sd.expect(t, ctx, "RELOADING=1", &seen)
	sd.expect(t, ctx, "READY=1", &seen)

	ta.sigs <- syscall.SIGTERM
	if stopping := sd.expect(t, ctx, "STOPPING=1", &seen); stopping != "STOPPING=1\nSTATUS=shutting down" {
		t.Errorf("STOPPING = %q", stopping)
	}
	if code := waitExit(t, exit); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, ta.stderr)
	}
	for _, m := range seen {
		if strings.Contains(m, ctlTestKey) {
			t.Errorf("a notification carries the key: %q", m)
		}
	}
}

func TestRunRefusesABadNotifySocket(t *testing.T) {
	ta := newTestApp(t)
	ta.env["NOTIFY_SOCKET"] = "/run/systemd/notify"
	ta.env["WATCHDOG_USEC"] = "soon"
	path := writeFile(t, "config.toml", "[hub]\nkey = \"k\"\n", 0o600)
	if code := ta.run("run", "--config", path); code != exitError {
		t.Fatalf("exit %d", code)
	}
	if got := ta.stderr.String(); !strings.Contains(got, `WATCHDOG_USEC="soon"`) {
		t.Errorf("stderr = %q", got)
	}
}

func TestConnectionStatus(t *testing.T) {
	const hub = "ws://h:1/vcp-distributed-server/VCP_Key=REDACTED"
	tests := []struct {
		st   node.ConnState
		want string
	}{
		{node.ConnState{Phase: controlapi.PhaseConnecting}, "connecting to " + hub},
		{node.ConnState{Phase: controlapi.PhaseConnected, ServerID: "s1"}, "connected to " + hub + " (server s1)"},
		{node.ConnState{Phase: controlapi.PhaseConnected}, "connected to " + hub},
		{node.ConnState{Phase: controlapi.PhaseBackoff, Attempt: 3, LastError: "refused"}, "disconnected from " + hub + ", retrying (attempt 3): refused"},
		{node.ConnState{Phase: controlapi.PhaseStopping}, "shutting down"},
	}
	for _, tt := range tests {
		if got := connectionStatus(tt.st, hub); got != tt.want {
			t.Errorf("connectionStatus(%s) = %q, want %q", tt.st.Phase, got, tt.want)
		}
	}
}
