package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// ctlTestKey looks like a real key, so a leak into any output would show.
const ctlTestKey = "Ctl-K3y_never.shown~7"

// testDaemon is a real node with its control socket, connected to a fake hub
// on loopback: what the control commands talk to.
type testDaemon struct {
	t       *testing.T
	ctx     context.Context // bounds every wait of the test
	hub     *demohub.Hub
	node    *node.Node
	socket  string
	logs    *testlog.Buffer
	console *control.Console // nil unless [console] listen is set
	// stop ends the daemon before the test does (a restart); it is also
	// run at the end of the test.
	stop func()
}

// testHubConfig is a config for a node of hub, written the way a user would.
func testHubConfig(hub *demohub.Hub, extra string) string {
	return "[hub]\nurl = \"" + hub.BaseURL() + "\"\nkey = \"" + ctlTestKey + "\"\nname = \"laptop\"\n\n" +
		"[node]\nexposed_tools = [\"Echo\"]\n" + extra
}

// startDaemon runs a node from the config file testHubConfig(extra) writes,
// serving its control API, until the test ends.
func startDaemon(t *testing.T, extra string, more ...toolhost.Tool) *testDaemon {
	t.Helper()
	return startDaemonHub(t, demohub.Options{}, extra, more...)
}

// startDaemonHub is startDaemon against a hub made with hubOpts.
func startDaemonHub(t *testing.T, hubOpts demohub.Options, extra string, more ...toolhost.Tool) *testDaemon {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	hubOpts.Key = ctlTestKey
	hub, err := demohub.Start(hubOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	path := writeFile(t, "config.toml", testHubConfig(hub, extra), 0o600)
	cfg, err := config.Load(path, toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	n, err := node.New(cfg, zerolog.New(logs).Level(zerolog.DebugLevel),
		node.WithTools(append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, more...)...),
		node.WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }),
		// None of the runner's environment ($VCPNODE_KEY above all), and a
		// state directory of the test's own (as root the default would be
		// /var/lib/vcpnode).
		node.WithGetenv(testStateEnv(t)))
	if err != nil {
		t.Fatal(err)
	}
	d := &testDaemon{t: t, ctx: ctx, hub: hub, node: n, socket: testnet.SocketPath(t), logs: logs}
	srv, err := control.Listen(ctx, n, control.Options{Socket: d.socket, ConfigFile: path, Version: "v0.9.0-test", Log: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	con, err := control.ListenConsole(srv, cfg.Console, zerolog.New(logs))
	if err != nil {
		t.Fatal(err)
	}
	d.console = con
	runCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- n.Run(runCtx) }()
	var once sync.Once
	d.stop = func() {
		once.Do(func() {
			stop()
			if con != nil {
				con.Close(context.Background())
			}
			select {
			case <-stopped:
			case <-time.After(20 * time.Second):
				t.Error("the node did not stop")
			}
			srv.Close(context.Background())
			if strings.Contains(logs.String(), ctlTestKey) {
				t.Errorf("the key reached the daemon's log:\n%s", logs)
			}
		})
	}
	t.Cleanup(d.stop)
	return d
}

// testStateEnv is an environment with nothing but a STATE_DIRECTORY of
// the test's own.
func testStateEnv(t *testing.T) func(string) string {
	dir := t.TempDir()
	return func(name string) string {
		if name == "STATE_DIRECTORY" {
			return dir
		}
		return ""
	}
}

// configFile is the file the daemon reloads.
func (d *testDaemon) configFile() string {
	st, err := controlapi.NewControlClient(d.socket).Status(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	return st.ConfigFile
}

// accept waits for the node's connection and for the node to know it is
// connected and has sent its tools (status shows "tools registered").
func (d *testDaemon) accept() *demohub.Conn {
	d.t.Helper()
	c, err := d.hub.Accept(d.ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	for {
		s, changed := d.node.State()
		if s.Phase == controlapi.PhaseConnected && s.ServerID != "" && s.Registered {
			return c
		}
		select {
		case <-changed:
		case <-d.ctx.Done():
			d.t.Fatalf("never connected: %+v", s)
		}
	}
}

// waitDisconnected waits for the node to know its connection ended.
func (d *testDaemon) waitDisconnected() {
	d.t.Helper()
	for {
		s, changed := d.node.State()
		if s.Phase != controlapi.PhaseConnected {
			return
		}
		select {
		case <-changed:
		case <-d.ctx.Done():
			d.t.Fatalf("never noticed the disconnection: %+v", s)
		}
	}
}

// waitPending waits until n calls await approval.
func (d *testDaemon) waitPending(n int) {
	d.t.Helper()
	testtool.WaitPending(d.ctx, d.t, d.node.Approvals(), n)
}

// callAsync sends an execute_tool from the hub; the result comes later.
func (d *testDaemon) callAsync(c *demohub.Conn, tool string, args map[string]any) <-chan wsproto.ToolResult {
	out := make(chan wsproto.ToolResult, 1)
	go func() {
		res, err := c.Call(d.ctx, tool, args)
		if err != nil {
			res = wsproto.ToolResult{Status: "no result", Error: err.Error()}
		}
		out <- res
	}()
	return out
}

func (d *testDaemon) result(ch <-chan wsproto.ToolResult) wsproto.ToolResult {
	d.t.Helper()
	select {
	case res := <-ch:
		return res
	case <-d.ctx.Done():
		d.t.Fatal("no tool_result")
		return wsproto.ToolResult{}
	}
}

// ctl runs a command against the daemon and returns exit code, stdout, stderr.
func (d *testDaemon) ctl(args ...string) (int, string, string) {
	d.t.Helper()
	ta := newTestApp(d.t)
	code := ta.run(append(args, "--socket", d.socket)...)
	out, errOut := ta.stdout.String(), ta.stderr.String()
	if strings.Contains(out+errOut, ctlTestKey) {
		d.t.Errorf("vcpnode %s printed the key:\n%s%s", strings.Join(args, " "), out, errOut)
	}
	return code, out, errOut
}

// ctlJSON runs a command with --json and decodes its output into v.
func (d *testDaemon) ctlJSON(v any, args ...string) {
	d.t.Helper()
	code, out, errOut := d.ctl(append(args, "--json")...)
	if code != exitOK {
		d.t.Fatalf("vcpnode %s --json: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		d.t.Fatalf("vcpnode %s --json printed %q: %v", strings.Join(args, " "), out, err)
	}
}

// wantLines checks that every want appears in out, each on a line of its own
// once runs of spaces are squeezed (the tables are aligned with spaces).
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("output lacks the line %q:\n%s", w, out)
		}
	}
}
