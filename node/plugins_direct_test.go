package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/wsproto"
)

const directHybridScript = `const fs = require('fs');
module.exports = {
  async initialize(config) { this.word = config.GREETING; },
  async processToolCall(args, ctx) {
    if (args.mode === 'wait') {
      fs.writeFileSync('started.txt', 'yes');
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => {
        fs.writeFileSync('aborted.txt', ctx.signal.reason.name + ': ' + ctx.signal.reason.message);
        resolve('stopped');
      }));
    }
    console.log('a log line on stdout');
    return { status: 'success', result: 'VERSION ' + this.word + ' ' + args.name + ' ' + JSON.stringify(ctx._vcpContext || null) };
  },
  async shutdown() { fs.appendFileSync('shutdowns.txt', 'x'); },
};
`

// directPlugins writes a hybridservice (CommonJS), an ESM one, one that
// needs the VCP server's files and a service into dir.
func directPlugins(t *testing.T, dir string) {
	t.Helper()
	direct := `"communication":{"protocol":"direct","timeout":20000}`
	writePlugin(t, dir, "Hybrid", `{"name":"Hybrid","pluginType":"hybridservice","description":"a direct plugin",
"entryPoint":{"script":"index.js"},`+direct+`,"configSchema":{"GREETING":"string"}}`,
		map[string]string{"index.js": strings.Replace(directHybridScript, "VERSION", "v1", 1), "config.env": "GREETING=hello\n"})
	writePlugin(t, dir, "EsmTool", `{"name":"EsmTool","pluginType":"hybridservice","entryPoint":{"script":"tool.mjs"},`+direct+`}`,
		map[string]string{"tool.mjs": "export async function processToolCall(args) { return `esm ${args.x}`; }\n"})
	writePlugin(t, dir, "NeedsServer", `{"name":"NeedsServer","pluginType":"hybridservice","entryPoint":{"script":"index.js"},`+direct+`}`,
		map[string]string{"index.js": "require('../../Plugin.js');\nmodule.exports = { processToolCall: async () => 1 };\n"})
	writePlugin(t, dir, "Svc", `{"name":"Svc","pluginType":"service","entryPoint":{"script":"index.js"},`+direct+`}`,
		map[string]string{"index.js": "module.exports = { initialize() {}, shutdown() {} };\n"})
}

func TestDirectPluginsThroughTheHub(t *testing.T) {
	needCommands(t, "node")
	plugins := t.TempDir()
	directPlugins(t, plugins)
	h := startHarness(t, pluginHarness(t.TempDir(), false, plugins))
	c := h.accept()
	names, manifests := registered(t, h, c)
	if want := []string{"EsmTool", "Hybrid"}; !slices.Equal(names, want) {
		t.Fatalf("registered %v, want %v", names, want)
	}
	raw, _ := json.Marshal(manifests["Hybrid"])
	for _, leak := range []string{"index.js", `"script"`, "GREETING", "hello"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("the manifest sent to the server holds %q: %s", leak, raw)
		}
	}

	res, err := c.CallExecute(h.ctx, wsproto.ExecuteTool{ToolName: "Hybrid",
		ToolArgs: map[string]json.RawMessage{"name": []byte(`"Ann"`)}, VCPContext: json.RawMessage(`{"agent":"A1"}`)})
	if err != nil || res.Status != wsproto.StatusSuccess || firstText(t, res) != `v1 hello Ann {"agent":"A1"}` {
		t.Errorf("Hybrid answered %+v %v", res, err)
	}
	if res := h.call(c, "EsmTool", map[string]any{"x": "ok"}); res.Status != wsproto.StatusSuccess || firstText(t, res) != "esm ok" {
		t.Errorf("EsmTool answered %+v", res)
	}

	skipped := map[string]SkippedPlugin{}
	for _, sp := range h.node.SkippedPlugins() {
		skipped[sp.Name] = sp
	}
	if sp := skipped["NeedsServer"]; sp.Kind != "unsupported" || !strings.Contains(sp.Reason, "Cannot find module") ||
		!strings.Contains(sp.Reason, "VCP server's own files") {
		t.Errorf("NeedsServer listed as %+v", sp)
	}
	if sp := skipped["Svc"]; sp.Kind != "service" {
		t.Errorf("Svc listed as %+v", sp)
	}
	if n := h.node.PluginProcesses(); n != 3 {
		t.Errorf("%d plugin processes, want the 3 Node.js hosts", n)
	}

	// cancel_tool fires the call's AbortSignal.
	folder := filepath.Join(plugins, "Hybrid")
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "w1", ToolName: "Hybrid",
		ToolArgs: map[string]json.RawMessage{"mode": []byte(`"wait"`)}}); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the call to start", func() bool { return fileText(filepath.Join(folder, "started.txt")) == "yes" })
	if err := c.Send(h.ctx, wsproto.CancelTool{RequestID: "w1"}); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the plugin to see the abort", func() bool { return fileText(filepath.Join(folder, "aborted.txt")) != "" })
	if got := fileText(filepath.Join(folder, "aborted.txt")); got != "AbortError: the call was cancelled by the server" {
		t.Errorf("abort reason %q", got)
	}

	// Stop: every module's shutdown() runs and every host is reaped.
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	if got := fileText(filepath.Join(folder, "shutdowns.txt")); got != "x" {
		t.Errorf("shutdown() calls: %q", got)
	}
	if n := h.node.PluginProcesses(); n != 0 {
		t.Errorf("%d plugin processes after stop", n)
	}
}

// TestDirectPluginScriptEditReloadsTheModule: with watch on, editing a
// direct plugin's script shuts the old module down and loads the new one,
// without a reconnect (the tool the server sees did not change).
func TestDirectPluginScriptEditReloadsTheModule(t *testing.T) {
	needCommands(t, "node")
	plugins := t.TempDir()
	directPlugins(t, plugins)
	h := startHarness(t, pluginHarness(t.TempDir(), true, plugins))
	c := h.accept()
	registered(t, h, c)
	h.waitLog("watching the plugin folders for changes")
	if res := h.call(c, "Hybrid", map[string]any{"name": "B"}); !strings.HasPrefix(firstText(t, res), "v1 ") {
		t.Fatalf("before the edit: %+v", res)
	}
	folder := filepath.Join(plugins, "Hybrid")
	if err := os.WriteFile(filepath.Join(folder, "index.js"), []byte(strings.Replace(directHybridScript, "VERSION", "v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	h.waitUntil("the edited module to answer", func() bool {
		res := h.call(c, "Hybrid", map[string]any{"name": "B"})
		return res.Status == wsproto.StatusSuccess && strings.HasPrefix(firstText(t, res), "v2 ")
	})
	if got := fileText(filepath.Join(folder, "shutdowns.txt")); got != "x" {
		t.Errorf("the replaced module's shutdown() calls: %q", got)
	}
	select {
	case <-c.Done():
		t.Error("the node reconnected for a module edit that changed no tool")
	default:
	}
}

func fileText(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// TestWithoutNodeJSTheRestRuns: with no Node.js, direct plugins are listed
// as needing it and the stdio plugins beside them are served as usual.
func TestWithoutNodeJSTheRestRuns(t *testing.T) {
	needCommands(t, "sh")
	plugins := t.TempDir()
	directPlugins(t, plugins)
	writePlugin(t, plugins, "Alpha", syncManifest("Alpha", "a stdio plugin"), map[string]string{"answer.sh": answerScript})
	opt := pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.Plugins.Node = filepath.Join(t.TempDir(), "no-node-here")
	})
	h := startHarness(t, opt)
	c := h.accept()
	if names, _ := registered(t, h, c); !slices.Equal(names, []string{"Alpha"}) {
		t.Fatalf("registered %v, want only the stdio plugin", names)
	}
	if res := h.call(c, "Alpha", nil); res.Status != wsproto.StatusSuccess || firstText(t, res) != "answered by Alpha" {
		t.Errorf("Alpha answered %+v", res)
	}
	n := 0
	for _, sp := range h.node.SkippedPlugins() {
		if sp.Kind == "unsupported" && strings.HasPrefix(sp.Reason, "needs Node.js") && strings.Contains(sp.Reason, "no-node-here") {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d direct plugins listed as needing Node.js, want 4: %+v", n, h.node.SkippedPlugins())
	}
}
