package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// examplePlugins is the repository's examples/Plugin, used as shipped.
func examplePlugins(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("examples/Plugin: %v", err)
	}
	return dir
}

func needCommands(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s is not on PATH; this test runs real %s plugins", name, name)
		}
	}
}

// pluginHarness hosts the plugins in dirs, keeps state in stateDir, and
// exposes every eligible tool.
func pluginHarness(stateDir string, watch bool, dirs ...string) harnessOpt {
	return harnessOpt{config: func(c *config.Config) {
		c.Node.ExposedTools = nil
		c.Plugins.Dirs = dirs
		c.Plugins.StateDir = stateDir
		c.Plugins.Watch = watch
		// Python plugins can take seconds just to start on a loaded
		// machine; the examples' own 10 s would then fail the test.
		c.Tools = map[string]config.ToolConfig{}
		for _, name := range []string{"UnitConverter", "DelayedEcho", "TextStats", "GatedAsync"} {
			c.Tools[name] = config.ToolConfig{Timeout: config.Duration(60 * time.Second)}
		}
	}}
}

// writePlugin makes dir/folder with a manifest and the given files.
var writePlugin = testtool.WritePlugin

// loadedMachine gives the named plugin tools, and the test's waits, time
// enough for interpreters that start slowly on a loaded machine: the
// shipped 10 s timeouts are for a node, not for a test sharing 2 cores with
// a dozen compilers. Through [tools.X] timeout, as an owner would.
func loadedMachine(o harnessOpt, tools ...string) harnessOpt {
	inner := o.config
	o.config = func(c *config.Config) {
		if inner != nil {
			inner(c)
		}
		if c.Tools == nil {
			c.Tools = map[string]config.ToolConfig{}
		}
		for _, name := range tools {
			tc := c.Tools[name]
			tc.Timeout = config.Duration(2 * time.Minute)
			c.Tools[name] = tc
		}
	}
	o.patience = 4 * time.Minute
	return o
}

var syncManifest = testtool.SyncManifest

const answerScript = testtool.AnswerScript

// gatedAsyncScript answers at once, then waits for the file named in its
// "gate" argument before posting its result: the test decides when the
// callback happens without sleeping.
const gatedAsyncScript = `import json, os, sys, time, urllib.request
args = json.loads(sys.stdin.read() or "{}")
task, gate = args.get("task", "t1"), args.get("gate", "")
name, base = os.environ["PLUGIN_NAME_FOR_CALLBACK"], os.environ["CALLBACK_BASE_URL"]
sys.stdout.write(json.dumps({"status": "success", "result": "started {{VCP_ASYNC_RESULT::%s::%s}}" % (name, task)}))
sys.stdout.close()
deadline = time.time() + 20
while gate and not os.path.exists(gate) and time.time() < deadline:
    time.sleep(0.01)
body = json.dumps({"requestId": task, "status": "Succeed", "message": "done " + task}).encode()
req = urllib.request.Request("%s/%s/%s" % (base, name, task), data=body, method="POST", headers={"Content-Type": "application/json"})
urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=10).read()
`

// postGatedCallback posts GatedAsync's success callback for task to the
// node's callback base URL, as the plugin's own callback would.
// callbackURL is a callback URL as a run of plugin would be given it.
func callbackURL(n *Node, plugin string) string { return n.plugins.CallbackURL(plugin) }

func postGatedCallback(t *testing.T, base, task string) {
	t.Helper()
	if got := postToNode(t, base+"/GatedAsync/"+task, `{"status":"Succeed","message":"`+task+`"}`); got != 200 {
		t.Fatalf("POST %s: %d", task, got)
	}
}

func gatedAsyncPlugin(t *testing.T, dir string) {
	t.Helper()
	writePlugin(t, dir, "GatedAsync", `{"name":"GatedAsync","displayName":"Gated async","pluginType":"asynchronous",
"description":"answers, then calls back when its gate file appears",
"entryPoint":{"command":"python3 gated.py"},"communication":{"protocol":"stdio","timeout":10000}}`,
		map[string]string{"gated.py": gatedAsyncScript})
}

func registered(t *testing.T, h *harness, c *demohub.Conn) (names []string, manifests map[string]map[string]any) {
	t.Helper()
	m, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatalf("register_tools: %v", err)
	}
	manifests = map[string]map[string]any{}
	for _, raw := range m.(wsproto.RegisterTools).Tools {
		var mf map[string]any
		if err := json.Unmarshal(raw, &mf); err != nil {
			t.Fatal(err)
		}
		name, _ := mf["name"].(string)
		names = append(names, name)
		manifests[name] = mf
	}
	slices.Sort(names)
	return names, manifests
}

func waitForwarded(t *testing.T, h *harness, c *demohub.Conn) (serverName string, data map[string]any) {
	t.Helper()
	m, err := c.WaitType(h.ctx, wsproto.TypePluginCallbackForward)
	if err != nil {
		t.Fatalf("plugin_callback_forward: %v", err)
	}
	f := m.(wsproto.PluginCallbackForward)
	if err := json.Unmarshal(f.CallbackData, &data); err != nil {
		t.Fatalf("callbackData %s: %v", f.CallbackData, err)
	}
	return f.ServerName, data
}

// waitUntil polls cond with a deadline; for state that has no change signal.
func (h *harness) waitUntil(what string, cond func() bool) {
	h.t.Helper()
	if !testwait.Poll(h.ctx, cond) {
		h.t.Fatalf("timed out waiting for %s", what)
	}
}

func postToNode(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST callback: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestExamplePluginsThroughTheHub(t *testing.T) {
	needCommands(t, "python3", "node")
	h := startHarness(t, loadedMachine(pluginHarness(t.TempDir(), false, examplePlugins(t)), "UnitConverter", "TextStats", "DelayedEcho"))
	c := h.accept()
	names, manifests := registered(t, h, c)
	if want := []string{"DelayedEcho", "TextStats", "UnitConverter"}; !slices.Equal(names, want) {
		t.Fatalf("registered %v, want %v (the static SystemStatus is no tool, Echo is builtin)", names, want)
	}
	for name, mf := range manifests {
		raw, _ := json.Marshal(mf)
		for _, leak := range []string{`"command":"python3`, `"command":"node`, "basePath", "configSchema", "PRECISION"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("the manifest of %s sent to the server holds %q: %s", name, leak, raw)
			}
		}
	}
	if push, _ := manifests["DelayedEcho"]["webSocketPush"].(map[string]any); push["messageType"] != "delayed_echo_done" {
		t.Errorf("DelayedEcho's webSocketPush = %v", manifests["DelayedEcho"]["webSocketPush"])
	}

	tests := []struct {
		tool      string
		args      map[string]any
		wantText  string
		wantError string
	}{
		{"UnitConverter", map[string]any{"command": "Convert", "value": "10", "from": "km", "to": "mi"}, "10 km = 6.21371 mi", ""},
		{"UnitConverter", map[string]any{"command": "ListUnits"}, "temperature: C, F, K", ""},
		{"UnitConverter", map[string]any{"command": "Convert", "value": "1", "from": "kg", "to": "km"}, "", "cannot convert kg (mass) to km (length)"},
		{"TextStats", map[string]any{"command": "Count", "text": "One line. Two sentences!"}, "24 characters, 4 words, 1 lines, 2 sentences", ""},
		{"TextStats", map[string]any{"command": "TopWords", "text": "the cat and the hat", "limit": "1"}, "the: 2", ""},
		{"SystemStatus", nil, "", "unknown tool"},
	}
	for _, tt := range tests {
		res := h.call(c, tt.tool, tt.args)
		switch {
		case tt.wantError != "":
			if res.Status != wsproto.StatusError || !strings.Contains(res.Error, tt.wantError) {
				t.Errorf("%s %v = %+v, want an error containing %q", tt.tool, tt.args, res, tt.wantError)
			}
		case res.Status != wsproto.StatusSuccess:
			t.Errorf("%s %v failed: %s", tt.tool, tt.args, res.Error)
		case !strings.Contains(firstText(t, res), tt.wantText):
			t.Errorf("%s %v = %q, want %q in it", tt.tool, tt.args, firstText(t, res), tt.wantText)
		}
	}

	static := h.node.StaticPlugins()
	if len(static) != 1 || static[0].Name != "SystemStatus" || !slices.Equal(static[0].Placeholders, []string{"{{VCPNodeSystemStatus}}"}) || static[0].Cron != "*/5 * * * *" {
		t.Fatalf("static plugins = %+v, want SystemStatus with its placeholder and cron", static)
	}
	out, err := static[0].Run(h.ctx)
	if err != nil || !strings.Contains(out.Stdout, "Host: ") {
		t.Errorf("SystemStatus run = %q, %v", out.Stdout, err)
	}
}

var asyncPlaceholder = regexp.MustCompile(`\{\{VCP_ASYNC_RESULT::([A-Za-z0-9_.-]+)::([A-Za-z0-9_-]+)\}\}`)

func TestAsyncPluginCallbackIsForwarded(t *testing.T) {
	needCommands(t, "python3")
	h := startHarness(t, loadedMachine(pluginHarness(t.TempDir(), false, examplePlugins(t)), "DelayedEcho"))
	c := h.accept()
	res := h.call(c, "DelayedEcho", map[string]any{"text": "hello later", "delay": "0"})
	if res.Status != wsproto.StatusSuccess {
		t.Fatalf("DelayedEcho: %s", res.Error)
	}
	m := asyncPlaceholder.FindStringSubmatch(firstText(t, res))
	if m == nil || m[1] != "DelayedEcho" {
		t.Fatalf("the answer has no placeholder for DelayedEcho: %q", firstText(t, res))
	}
	server, data := waitForwarded(t, h, c)
	if server != "test-node" || data["pluginName"] != "DelayedEcho" || data["taskId"] != m[2] || data["requestId"] != m[2] ||
		data["status"] != "Succeed" || !strings.Contains(fmt.Sprint(data["message"]), "hello later") {
		t.Errorf("forwarded serverName %q, callbackData %v; want DelayedEcho/%s with the message", server, data, m[2])
	}
	h.waitUntil("the outbox to empty", func() bool { return h.node.OutboxWaiting() == 0 })
	if strings.Contains(h.logs.String(), "/plugin-callback/") {
		t.Error("a callback URL, with its token, appears in the log")
	}
}

func TestCallbacksWhileDisconnectedArriveInOrderAfterReconnect(t *testing.T) {
	needCommands(t, "python3")
	plugins := t.TempDir()
	gatedAsyncPlugin(t, plugins)
	h := startHarness(t, pluginHarness(t.TempDir(), false, plugins))
	c := h.accept()
	gate := filepath.Join(t.TempDir(), "gate")
	if res := h.call(c, "GatedAsync", map[string]any{"task": "from-plugin", "gate": gate}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("GatedAsync: %s", res.Error)
	}

	h.hub.Stop(h.ctx)
	h.waitState("disconnected", func(s ConnState) bool { return s.Phase != PhaseConnected })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the plugin's callback to be stored", func() bool { return h.node.OutboxWaiting() == 1 })
	base := callbackURL(h.node, "GatedAsync")
	if got := postToNode(t, base, `{"pluginName":"GatedAsync","requestId":"direct-1","status":"Failed","reason":"x"}`); got != 200 {
		t.Fatalf("bare POST while disconnected: %d", got)
	}
	if got := postToNode(t, base+"/GatedAsync/direct-2", `{"status":"Succeed"}`); got != 200 {
		t.Fatalf("POST while disconnected: %d", got)
	}
	if got := postToNode(t, callbackURL(h.node, "UnitConverter")+"/UnitConverter/x", `{}`); got != http.StatusNotFound {
		t.Errorf("a callback for a plugin that is not loaded here got %d, want 404", got)
	}

	if err := h.hub.Resume(); err != nil {
		t.Fatal(err)
	}
	c2 := h.accept()
	for _, want := range []string{"from-plugin", "direct-1", "direct-2"} {
		if _, data := waitForwarded(t, h, c2); data["taskId"] != want || data["pluginName"] != "GatedAsync" {
			t.Fatalf("forwarded %v, want GatedAsync/%s next", data, want)
		}
	}
	h.waitUntil("the outbox to empty", func() bool { return h.node.OutboxWaiting() == 0 })
}

func TestOutboxSurvivesANodeRestart(t *testing.T) {
	needCommands(t, "python3")
	plugins, state := t.TempDir(), t.TempDir()
	gatedAsyncPlugin(t, plugins)
	first := startHarness(t, pluginHarness(state, false, plugins))
	registered(t, first, first.accept())
	first.hub.Stop(first.ctx)
	first.waitState("disconnected", func(s ConnState) bool { return s.Phase != PhaseConnected })
	if got := postToNode(t, callbackURL(first.node, "GatedAsync")+"/GatedAsync/before-restart", `{"status":"Succeed","message":"kept"}`); got != 200 {
		t.Fatalf("POST: %d", got)
	}
	if err := first.shutdown(); err != nil {
		t.Fatal(err)
	}

	second := startHarness(t, pluginHarness(state, false, plugins))
	c := second.accept()
	if _, data := waitForwarded(t, second, c); data["taskId"] != "before-restart" || data["message"] != "kept" {
		t.Errorf("after the restart the node forwarded %v, want the stored callback", data)
	}
}

func TestPluginFolderChangesReconnectWithTheNewSet(t *testing.T) {
	plugins := t.TempDir()
	writePlugin(t, plugins, "Alpha", syncManifest("Alpha", "first"), map[string]string{"answer.sh": answerScript})
	h := startHarness(t, pluginHarness(t.TempDir(), true, plugins))
	names, _ := registered(t, h, h.accept())
	if !slices.Equal(names, []string{"Alpha"}) {
		t.Fatalf("registered %v", names)
	}
	h.waitLog("watching the plugin folders for changes")

	// A new plugin folder.
	writePlugin(t, plugins, "Beta", syncManifest("Beta", "second"), map[string]string{"answer.sh": answerScript})
	c := h.accept()
	if names, _ := registered(t, h, c); !slices.Equal(names, []string{"Alpha", "Beta"}) {
		t.Fatalf("after adding Beta: registered %v", names)
	}
	if res := h.call(c, "Beta", nil); firstText(t, res) != "answered by Beta" {
		t.Errorf("Beta answered %+v", res)
	}

	// A manifest of a plugin in use turns invalid: the set in force stays,
	// and no reconnect happens (the next connection is the fix's).
	betaManifest := filepath.Join(plugins, "Beta", "plugin-manifest.json")
	if err := os.WriteFile(betaManifest, []byte(`{"name":"Beta",`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitLog(`plugin \"Beta\", which is in use`)
	if err := os.WriteFile(betaManifest, []byte(syncManifest("Beta", "second, edited")), 0o644); err != nil {
		t.Fatal(err)
	}
	c = h.accept()
	names, manifests := registered(t, h, c)
	if !slices.Equal(names, []string{"Alpha", "Beta"}) || manifests["Beta"]["description"] != "second, edited" {
		t.Fatalf("after editing Beta: registered %v, Beta %v", names, manifests["Beta"])
	}

	// Disabling a plugin the VCP way.
	if err := os.Rename(filepath.Join(plugins, "Alpha", "plugin-manifest.json"), filepath.Join(plugins, "Alpha", "plugin-manifest.json.block")); err != nil {
		t.Fatal(err)
	}
	if names, _ := registered(t, h, h.accept()); !slices.Equal(names, []string{"Beta"}) {
		t.Fatalf("after blocking Alpha: registered %v", names)
	}
	// tools --all says why it is off, never "disabled: " alone.
	_, client := startControl(t, h, "")
	tools, err := client.Tools(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(ts controlapi.ToolStatus) bool { return ts.Name == "Alpha" })
	if i < 0 || tools[i].Skipped != "disabled" || !strings.Contains(tools[i].Reason, "renamed plugin-manifest.json.block") {
		t.Errorf("Alpha in tools --all = %+v", tools)
	}
}

func TestPluginSetupErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"missing plugin dir", func(c *config.Config) { c.Plugins.Dirs = []string{filepath.Join(t.TempDir(), "nope")} }, "plugin dir"},
		{"state dir under a file", func(c *config.Config) { c.Plugins.StateDir = filepath.Join(file, "state") }, "state_dir"},
		{"missing env file", func(c *config.Config) { c.Plugins.EnvFile = filepath.Join(t.TempDir(), "config.env") }, "env_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Hub.Key = testKey
			cfg.Plugins.Dirs = []string{t.TempDir()}
			cfg.Plugins.StateDir = t.TempDir()
			tt.change(&cfg)
			n, err := New(cfg, zerolog.Nop())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error about %s", err, tt.want)
			}
			if n != nil {
				t.Error("New returned a node with its error")
			}
		})
	}
}
