package node

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/internal/testmetrics"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// scrape and metricValue read /metrics (testmetrics), by the names
// node's tests use.
var (
	scrape      = testmetrics.Scrape
	metricValue = testmetrics.Value
)

func startMetrics(t *testing.T, h *harness) *control.MetricsServer {
	t.Helper()
	srv, err := control.ListenMetrics(h.node, config.MetricsConfig{Listen: "127.0.0.1:0"}, h.node.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("close metrics: %v", err)
		}
	})
	return srv
}

func TestMetricsScrape(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, config: func(c *config.Config) {
		c.Node.MaxConcurrent = 1
		c.Tools = map[string]config.ToolConfig{"Gate": {Approval: "ask", Timeout: config.Duration(5 * time.Minute)}}
	}})
	conn := h.accept()
	srv := startMetrics(t, h)

	for _, args := range []map[string]any{{"message": "a"}, {"message": "b"}, {"fail": "boom"}} {
		h.call(conn, "Echo", args)
	}
	h.call(conn, "NoSuchTool", nil)
	// The owner's own calls are not the service's: not counted.
	if o := h.node.CallLocal(h.ctx, "local-1", "Echo", nil); !o.OK() {
		t.Fatalf("local call: %+v", o)
	}
	// One call holds the only slot (after approval), one waits in the queue.
	held := asyncCall(h, conn, "g-1", "Gate", nil)
	p := h.waitPending(1)
	if _, err := h.node.Approvals().Decide(p[0].ID, true, ""); err != nil {
		t.Fatal(err)
	}
	h.waitStarted(gate, "g-1")
	queued := asyncCall(h, conn, "e-q", "Echo", nil)
	waitQueued(h, "e-q")

	m := scrape(t, h.ctx, srv.Addr())
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"vcpnode_calls_total", map[string]string{"tool": "Echo", "outcome": "ok"}, 2},
		{"vcpnode_calls_total", map[string]string{"tool": "Echo", "outcome": "error"}, 1},
		{"vcpnode_calls_total", map[string]string{"tool": events.UnknownToolLabel, "outcome": "unknown_tool"}, 1},
		{"vcpnode_call_duration_seconds", map[string]string{"tool": "Echo"}, 3},
		{"vcpnode_connection_state", map[string]string{"state": "connected"}, 1},
		{"vcpnode_connection_state", map[string]string{"state": "backoff"}, 0},
		{"vcpnode_sessions_total", nil, 1},
		{"vcpnode_reconnects_total", nil, 0},
		{"vcpnode_calls_in_flight", nil, 1},
		{"vcpnode_queue_depth", nil, 1},
		{"vcpnode_approvals_pending", nil, 0},
		{"vcpnode_plugin_kills_total", nil, 0},
		{"vcpnode_plugin_restarts_total", nil, 0},
		{"vcpnode_placeholder_pushes_total", nil, 0},
	}
	for _, tt := range tests {
		if got, ok := metricValue(m, tt.name, tt.labels); !ok || got != tt.want {
			t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	if _, ok := metricValue(m, "go_goroutines", nil); !ok {
		t.Error("the Go runtime metrics are missing")
	}

	close(gate.Release)
	for _, ch := range []<-chan wsproto.ToolResult{held, queued} {
		if res := waitResult(h, ch); res.Status != wsproto.StatusSuccess {
			t.Fatalf("result %+v", res)
		}
	}
	m = scrape(t, h.ctx, srv.Addr())
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"vcpnode_calls_total", map[string]string{"tool": "Echo", "outcome": "ok"}, 3},
		{"vcpnode_calls_total", map[string]string{"tool": "Gate", "outcome": "ok"}, 1},
		{"vcpnode_approvals_total", map[string]string{"decision": "approved"}, 1},
		{"vcpnode_calls_in_flight", nil, 0},
		{"vcpnode_queue_depth", nil, 0},
	} {
		if got, ok := metricValue(m, c.name, c.labels); !ok || got != c.want {
			t.Errorf("after the calls: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// waitQueued polls the in-flight list until the call is queued.
func waitQueued(h *harness, id string) {
	h.t.Helper()
	queued := func() bool {
		return slices.ContainsFunc(h.node.InFlight(), func(c toolhost.InFlightCall) bool { return c.RequestID == id && c.Queued })
	}
	if !testwait.Poll(h.ctx, queued) {
		h.t.Fatalf("%s never queued", id)
	}
}

func TestListenMetricsAddresses(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	if srv, err := control.ListenMetrics(h.node, config.MetricsConfig{}, h.node.log); srv != nil || err != nil {
		t.Fatalf("metrics off: %v, %v", srv, err)
	}
	// Refused before anything listens: no socket on another address is opened.
	for _, listen := range []string{"0.0.0.0:9464", ":9464", "192.0.2.1:9464", "[::]:9464", "nohost"} {
		if srv, err := control.ListenMetrics(h.node, config.MetricsConfig{Listen: listen}, h.node.log); err == nil {
			srv.Close(context.Background())
			t.Errorf("control.ListenMetrics(%q) succeeded", listen)
		} else if !strings.Contains(err.Error(), "metrics.listen") {
			t.Errorf("control.ListenMetrics(%q) = %v", listen, err)
		}
	}
	srv, err := control.ListenMetrics(h.node, config.MetricsConfig{Listen: "[::1]:0"}, h.node.log)
	if err != nil {
		t.Skipf("no IPv6 loopback here (%v); 127.0.0.1 is covered by TestMetricsScrape", err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get("http://" + srv.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / = %s, want 404", resp.Status)
	}
}

func TestMetricsListenProblem(t *testing.T) {
	tests := []struct {
		listen string
		remote bool
		want   string // "" means fine
	}{
		{"127.0.0.1:9464", false, ""},
		{"[::1]:9464", false, ""},
		{"localhost:9464", false, ""},
		{"127.0.0.1:0", false, ""},
		{"0.0.0.0:9464", false, "beyond this machine"},
		{":9464", false, "beyond this machine"},
		{"0.0.0.0:9464", true, ""},
		{"192.0.2.1:9464", true, ""},
		{"example.com:9464", true, "not an IP address or localhost"},
		{"127.0.0.1", false, "is not host:port"},
		{"127.0.0.1:http", false, "no valid port"},
		{"127.0.0.1:70000", false, "no valid port"},
	}
	for _, tt := range tests {
		got := config.MetricsListenProblem(tt.listen, tt.remote)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("MetricsListenProblem(%q, %v) = %q, want %q", tt.listen, tt.remote, got, tt.want)
		}
	}
}

// TestMetricsCountPluginKillsAndPlaceholderPushes feeds both counters for
// real: a plugin killed at its deadline, and the placeholder snapshot.
func TestMetricsCountPluginKillsAndPlaceholderPushes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Plugin")
	if err := os.MkdirAll(filepath.Join(dir, "Sleeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"Sleeper","pluginType":"synchronous","entryPoint":{"command":"sleep 30"},` +
		`"communication":{"protocol":"stdio","timeout":1000}}`
	if err := os.WriteFile(filepath.Join(dir, "Sleeper", "plugin-manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Node.ExposedTools = nil
		c.Plugins.Dirs = []string{dir}
		c.Plugins.StateDir = t.TempDir()
		c.Plugins.Watch = false
		c.Placeholders.Values = map[string]string{"MetricsOwner": "Alice"}
	}})
	conn := h.accept()
	srv := startMetrics(t, h)
	if _, err := conn.WaitType(h.ctx, wsproto.TypeUpdateStaticPlaceholders); err != nil {
		t.Fatal(err)
	}
	if res := h.call(conn, "Sleeper", nil); res.Status != wsproto.StatusError || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("sleeping plugin = %+v, want a timeout", res)
	}
	// The answer may beat the reaping of the killed process by a moment:
	// scrape until the counters settle, within the test's deadline.
	var kills, pushes float64
	if !testwait.Poll(h.ctx, func() bool {
		m := scrape(t, h.ctx, srv.Addr())
		kills, _ = metricValue(m, "vcpnode_plugin_kills_total", nil)
		pushes, _ = metricValue(m, "vcpnode_placeholder_pushes_total", nil)
		return kills == 1 && pushes == 1
	}) {
		t.Fatalf("plugin kills %v, placeholder pushes %v; want 1 and 1", kills, pushes)
	}
}

// namedTool answers "ok" under any name.
type namedTool struct{ name string }

func (t namedTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: t.name, Description: "answers ok", Timeout: time.Minute, Builtin: true}
}

func (t namedTool) Invoke(context.Context, toolhost.Call) (any, error) { return "ok", nil }

// A registered tool whose name holds the key (a plugin folder named
// carelessly, say) is a real label of the call metrics, not "(unknown)":
// /metrics shows it with the key redacted, and never the key.
func TestMetricsRedactTheKeyInToolLabels(t *testing.T) {
	name := "Tool" + testKey
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{namedTool{name}}, redactLog: true, config: func(c *config.Config) {
		c.Node.ExposedTools = []string{name}
	}})
	conn := h.accept()
	srv := startMetrics(t, h)
	if res := h.call(conn, name, nil); res.Status != wsproto.StatusSuccess {
		t.Fatalf("call %s: %+v", name, res)
	}
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, "http://"+srv.Addr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	if strings.Contains(text, testKey) {
		t.Errorf("/metrics shows the key:\n%s", text)
	}
	for _, want := range []string{`vcpnode_calls_total{outcome="ok",tool="ToolREDACTED"} 1`, `vcpnode_call_duration_seconds_count{tool="ToolREDACTED"} 1`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s (so the label was not the tool's):\n%s", want, text)
		}
	}
}

// The plugin kill count stays put while a reload retires the plugin host
// that made the kills and closes it: the count moves from the host to the
// node's tally in one step, and PluginKills must not add both meanwhile
// (a Prometheus counter that goes up and back down reads as a reset).
func TestPluginKillsStayCountedOnceAcrossAReload(t *testing.T) {
	plugins := t.TempDir()
	writePlugin(t, plugins, "Sleeper", `{"name":"Sleeper","pluginType":"synchronous","entryPoint":{"command":"sleep 30"},`+
		`"communication":{"protocol":"stdio","timeout":1000}}`, nil)
	h := startHarness(t, pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.Tools = nil
		c.Node.ExposedTools = []string{"Sleeper"}
	}))
	conn := h.accept()
	if res := h.call(conn, "Sleeper", nil); res.Status != wsproto.StatusError || !strings.Contains(res.Error, "timed out") {
		t.Fatalf("sleeping plugin = %+v, want a timeout", res)
	}
	h.waitUntil("the killed plugin to be reaped", func() bool { return h.node.PluginProcesses() == 0 && h.node.PluginKills() == 1 })

	seen := make(chan uint64, 1)
	stop := make(chan struct{})
	go func() {
		most := uint64(0)
		for {
			select {
			case <-stop:
				seen <- most
				return
			default:
			}
			most = max(most, h.node.PluginKills())
		}
	}()
	// A new output cap makes a new plugin host; the old one, idle, is closed.
	cfg := h.node.Config()
	cfg.Plugins.MaxOutputBytes *= 2
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	close(stop)
	if most := <-seen; most > 1 {
		t.Errorf("PluginKills read %d during the reload, want 1 throughout", most)
	}
	if n := h.node.PluginKills(); n != 1 {
		t.Errorf("PluginKills = %d after the reload, want 1", n)
	}
}
