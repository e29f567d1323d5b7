package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

const observerOn = "\n[observer]\nenabled = true\n"

// watchApp runs `vcpnode watch ARGS` in the background until the test ends.
func watchApp(t *testing.T, ctx context.Context, args ...string) (*testApp, <-chan int) {
	t.Helper()
	ta := newTestApp(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		root := newRootCmd(ta.app)
		root.SetArgs(append([]string{"watch"}, args...))
		cmd, err := root.ExecuteContextC(ctx)
		done <- report(ta.stderr, cmd, err)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("watch did not stop")
		}
	})
	return ta, done
}

// waitOutput polls buf until it holds substr (output has no change channel).
func waitOutput(t *testing.T, ctx context.Context, buf *testlog.Buffer, substr string) string {
	t.Helper()
	for {
		if s := buf.String(); strings.Contains(s, substr) {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("output never held %q:\n%s", substr, buf.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (d *testDaemon) observersUp() {
	d.t.Helper()
	for _, ch := range []string{demohub.ChannelVCPLog, demohub.ChannelVCPInfo} {
		if _, err := d.hub.AcceptObserver(d.ctx, ch); err != nil {
			d.t.Fatal(err)
		}
	}
	for {
		st, err := controlapi.NewControlClient(d.socket).Status(d.ctx)
		if err != nil {
			d.t.Fatal(err)
		}
		up := len(st.Observers) == 2
		for _, o := range st.Observers {
			up = up && o.Phase == controlapi.PhaseConnected
		}
		if up {
			return
		}
		select {
		case <-d.ctx.Done():
			d.t.Fatalf("observers never up: %+v", st.Observers)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestWatchShowsServerAndNodeEvents(t *testing.T) {
	d := startDaemon(t, observerOn)
	conn := d.accept()
	d.observersUp()
	code, out, _ := d.ctl("status")
	if code != exitOK {
		t.Fatal(out)
	}
	if sq := squeezedLines(out); !strings.Contains(sq, "observer VCPlog connected for ") || !strings.Contains(sq, "(1 sessions)\nobserver vcpinfo connected for ") {
		t.Errorf("status:\n%s", out)
	}

	ta, _ := watchApp(t, d.ctx, "--socket", d.socket)
	waitOutput(t, d.ctx, ta.stderr, "watching the daemon at "+d.socket)
	plain, _ := watchApp(t, d.ctx, "--socket", d.socket, "--json", "--server-only")
	waitOutput(t, d.ctx, plain.stderr, "watching the daemon")

	d.hub.LogToolResult("Weather", "success", "Sunny, 21°C\nwind 3 m/s")
	d.result(d.callAsync(conn, "Echo", map[string]any{"message": "hi"}))
	if _, err := d.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", Args: map[string]any{"command": "ls"}, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	got := waitOutput(t, d.ctx, ta.stdout, "approval?")
	for _, want := range []string{
		" server result Weather success Sunny, 21°C\n",
		" node start Echo -\n",
		" node end Echo ok ",
		" server approval? Shell - asked by Nova: command=\"ls\" (vcpnode approve approve-",
	} {
		if !strings.Contains(squeezedLines(got), want) {
			t.Errorf("watch output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`(?m) node end Echo ok \S+ echo from \S+ \(request fh-1\)$`).MatchString(squeezedLines(got)) {
		t.Errorf("the end line lacks its duration or result's first line:\n%s", got)
	}
	if strings.Contains(got, "\x1b[") {
		t.Errorf("colours on a pipe:\n%q", got)
	}
	js := waitOutput(t, d.ctx, plain.stdout, "tool_approval_request")
	for _, line := range strings.Split(strings.TrimSpace(js), "\n") {
		var ev controlapi.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("--json line %q: %v", line, err)
		}
		if ev.Source != controlapi.EventSourceServer {
			t.Errorf("--server-only printed %+v", ev)
		}
	}
}

// squeezedLines joins the output's lines with runs of spaces squeezed.
func squeezedLines(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

func TestWatchReconnectsToTheDaemon(t *testing.T) {
	d := startDaemon(t, "")
	conn := d.accept()
	sock := filepath.Join(filepath.Dir(testnet.SocketPath(t)), "w.sock")
	listen := func() *control.Server {
		srv, err := control.Listen(d.ctx, d.node, control.Options{Socket: sock, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := listen()
	ta, _ := watchApp(t, d.ctx, "--socket", sock, "--node-only")
	waitOutput(t, d.ctx, ta.stderr, "watching the daemon")
	if err := srv.Close(d.ctx); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, d.ctx, ta.stderr, "lost the daemon")
	srv = listen()
	t.Cleanup(func() { srv.Close(context.Background()) })
	waitOutput(t, d.ctx, ta.stderr, "reconnected to the daemon")
	d.result(d.callAsync(conn, "Echo", map[string]any{"message": "after"}))
	waitOutput(t, d.ctx, ta.stdout, " end ")
}

func TestWatchWithoutADaemonUsesTheHub(t *testing.T) {
	hub, err := demohub.Start(demohub.Options{Key: ctlTestKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := writeFile(t, "config.toml", testHubConfig(hub, ""), 0o600)
	ta, _ := watchApp(t, ctx, "--config", path, "--socket", filepath.Join(t.TempDir(), "none.sock"))
	msg := waitOutput(t, ctx, ta.stderr, "watching the server's observer channels (VCPlog, vcpinfo) at ws://"+hub.Addr()+" directly")
	if !strings.Contains(msg, "no daemon answers at") || strings.Contains(msg, ctlTestKey) {
		t.Fatalf("stderr %q", msg)
	}
	o, err := hub.AcceptObserver(ctx, demohub.ChannelVCPLog)
	if err != nil {
		t.Fatal(err)
	}
	if o.Device() != "laptop-watch" {
		t.Errorf("device %q", o.Device())
	}
	// The connection is up once the hub has acked it; broadcast until seen.
	for !strings.Contains(ta.stdout.String(), "Weather") {
		hub.LogToolResult("Weather", "success", "Sunny")
		select {
		case <-ctx.Done():
			t.Fatalf("no event printed:\n%s%s", ta.stdout, ta.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if out := ta.stdout.String() + ta.stderr.String(); strings.Contains(out, ctlTestKey) {
		t.Fatalf("the key was printed:\n%s", out)
	}
}

func TestServerApprovalsFromTheCLI(t *testing.T) {
	d := startDaemon(t, observerOn)
	d.accept()
	d.observersUp()
	first, _ := d.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", Args: map[string]any{"command": "make deploy"}, TTL: 5 * time.Minute})
	second, _ := d.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", Args: map[string]any{"command": "rm -rf build"}, TTL: 5 * time.Minute})
	var out string
	for !strings.Contains(out, second) {
		_, out, _ = d.ctl("approvals")
		select {
		case <-d.ctx.Done():
			t.Fatalf("approvals never listed:\n%s", out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	squeezed := squeezedLines(out)
	if !strings.Contains(squeezed, "ID WHERE TOOL REQUEST WAITING REFUSED IN ARGUMENTS") ||
		!strings.Contains(squeezed, first+" server Shell by Nova ") || !strings.Contains(squeezed, ` of 5m command="make deploy"`) {
		t.Fatalf("approvals:\n%s", out)
	}
	if code, out, errOut := d.ctl("approve", first); code != exitOK || out != "approved "+first+": Shell (request "+first+")\n" {
		t.Fatalf("approve = %d %q %s", code, out, errOut)
	}
	if code, _, errOut := d.ctl("deny", second, "--reason", "not today"); code != exitOK {
		t.Fatalf("deny: %s", errOut)
	}
	for id, want := range map[string]string{
		first:  `{"type":"tool_approval_response","data":{"requestId":"` + first + `","approved":true,"reason":""}}`,
		second: `{"type":"tool_approval_response","data":{"requestId":"` + second + `","approved":false,"reason":"not today"}}`,
	} {
		if ans, err := d.hub.WaitApprovalAnswer(d.ctx, id); err != nil || string(ans.Raw) != want {
			t.Fatalf("hub got %s (%v), want %s", ans.Raw, err, want)
		}
	}
	if _, out, _ := d.ctl("approvals"); out != "no calls are waiting for approval\n" {
		t.Fatalf("after answering:\n%s", out)
	}
	if code, _, errOut := d.ctl("approve", first); code == exitOK || !strings.Contains(errOut, "answered or have expired") {
		t.Fatalf("second approve = %d %s", code, errOut)
	}
}

// The loop guard's answers show in watch ([tools.NAME] repeat_limit here):
// a repeated call ends with status
// "repeated" and the text telling the model it repeats itself.
func TestWatchShowsRepeatedCalls(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\nrepeat_limit = 1\n")
	conn := d.accept()
	ta, _ := watchApp(t, d.ctx, "--socket", d.socket, "--node-only")
	waitOutput(t, d.ctx, ta.stderr, "watching the daemon")
	d.result(d.callAsync(conn, "Echo", map[string]any{"message": "again"}))
	if res := d.result(d.callAsync(conn, "Echo", map[string]any{"message": "again"})); !strings.Contains(res.Error, "You are repeating yourself") {
		t.Fatalf("the repeated call: %+v", res)
	}
	got := waitOutput(t, d.ctx, ta.stdout, " repeated ")
	if !strings.Contains(squeezedLines(got), " node end Echo repeated ") || !strings.Contains(got, "repeated call: Echo was already called") {
		t.Errorf("watch output:\n%s", got)
	}
}
