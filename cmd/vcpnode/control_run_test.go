package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// pollStatus asks the daemon at sock until ok holds for its status (the
// daemon may not listen yet) or ctx ends.
func pollStatus(t *testing.T, ctx context.Context, sock string, what string, ok func(controlapi.StatusResponse) bool) controlapi.StatusResponse {
	t.Helper()
	c := controlapi.NewControlClient(sock)
	defer c.Close()
	var st controlapi.StatusResponse
	var last error
	if !testwait.Poll(ctx, func() bool {
		st, last = c.Status(ctx)
		return last == nil && ok(st)
	}) {
		t.Fatalf("timed out waiting for %s (last error %v, status %+v)", what, last, st)
	}
	return st
}

// TestRunServesControlAndReloadsOnSIGHUP runs `vcpnode run` with the real
// node: the control socket answers before the hub lets it in, a second
// daemon is refused, a real SIGHUP reloads the config, metrics are served,
// and the socket is gone after shutdown.
func TestRunServesControlAndReloadsOnSIGHUP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hub, err := demohub.Start(demohub.Options{Key: ctlTestKey})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	hub.RefuseHandshakes(-1) // not connected yet: the socket must answer anyway
	sock := testnet.SocketPath(t)
	metrics := "[metrics]\nlisten = \"127.0.0.1:0\"\n"
	path := writeFile(t, "config.toml", testHubConfig(hub, "\n"+metrics), 0o600)

	ta := newTestApp(t)
	ta.newNode = newApp().newNode // the real node
	exit := startRun(ta, "--config", path, "--socket", sock, "--log-format", "json")

	st := pollStatus(t, ctx, sock, "the control socket", func(controlapi.StatusResponse) bool { return true })
	if st.Connection.Phase == controlapi.PhaseConnected || st.Version != currentBuild().Version || st.ConfigFile != path {
		t.Errorf("first status = %+v", st)
	}
	// The metrics endpoint starts right after the control socket.
	st = pollStatus(t, ctx, sock, "the metrics address", func(s controlapi.StatusResponse) bool { return s.Metrics != "" })
	if !strings.HasPrefix(st.Metrics, "127.0.0.1:") {
		t.Errorf("metrics address %q", st.Metrics)
	}

	// A second daemon on the same socket is refused before it connects.
	second := newTestApp(t)
	second.newNode = newApp().newNode
	if code := waitExit(t, startRun(second, "--config", path, "--socket", sock)); code != exitError ||
		!strings.Contains(second.stderr.String(), "another vcpnode is already running: a daemon answers on "+sock) {
		t.Errorf("second run: exit %d\n%s", code, second.stderr)
	}

	hub.RefuseHandshakes(0)
	c := controlapi.NewControlClient(sock)
	defer c.Close()
	if _, err := c.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	pollStatus(t, ctx, sock, "connected", func(s controlapi.StatusResponse) bool { return s.Connection.Phase == controlapi.PhaseConnected })

	// SIGHUP, a real one, to this process: run has asked for it.
	if err := os.WriteFile(path, []byte(testHubConfig(hub, "hidden_tools = [\"NodeInfo\"]\n\n"+metrics)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := signalSelf(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, ctx, ta.stderr, `"message":"config reloaded on SIGHUP"`)
	if log := ta.stderr.String(); !strings.Contains(log, `"changed":["node"]`) {
		t.Errorf("the reload did not report the change:\n%s", log)
	}
	// A bad config on SIGHUP is logged and changes nothing.
	if err := os.WriteFile(path, []byte(testHubConfig(hub, "max_concurrent = 0\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := signalSelf(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, ctx, ta.stderr, "reload failed; the old config stays in force")

	// The metrics endpoint of the running daemon answers and parses.
	resp, err := http.Get("http://" + st.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if f := families["vcpnode_sessions_total"]; f == nil || f.GetMetric()[0].GetCounter().GetValue() != 1 {
		t.Errorf("vcpnode_sessions_total = %v", f)
	}

	ta.sigs <- syscall.SIGTERM
	if code := waitExit(t, exit); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, ta.stderr)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is still there after shutdown: %v", err)
	}
	if strings.Contains(ta.stderr.String(), ctlTestKey) {
		t.Errorf("the key reached the log:\n%s", ta.stderr)
	}
}

// waitLog polls buf until it holds want.
func waitLog(t *testing.T, ctx context.Context, buf *testlog.Buffer, want string) {
	t.Helper()
	if !testwait.Poll(ctx, func() bool { return strings.Contains(buf.String(), want) }) {
		t.Fatalf("log never said %q:\n%s", want, buf)
	}
}

// signalSelf sends sig to this process (through os, which compiles on every
// platform; the test runs where the daemon handles SIGHUP).
func signalSelf(sig os.Signal) error {
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		return err
	}
	return p.Signal(sig)
}
