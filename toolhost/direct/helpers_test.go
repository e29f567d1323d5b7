package direct

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// waitLimit bounds every wait in these tests: generous, for a loaded machine.
const waitLimit = 30 * time.Second

func needNode(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		tb.Skip("node is not on PATH: these tests run real Node.js direct plugins (install nodejs)")
	}
}

// testPlugins are the direct plugins the tests load, by folder: manifest
// fields after name, and files.
var testPlugins = map[string]struct {
	manifest string
	files    map[string]string
}{
	// Returns at once: the benchmark's warm call.
	"Fast": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { processToolCall: async (args) => ({ ok: true }) };\n",
	}},
	// Starts two children that ignore SIGTERM: one in its process group,
	// one in a session of its own (detached: setsid).
	"Spawner": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": `const { spawn } = require('child_process');
module.exports = { async processToolCall() {
  const c = spawn('sh', ['-c', 'trap "" TERM; sleep 600'], { stdio: 'ignore' });
  const d = spawn('sh', ['-c', 'trap "" TERM; sleep 600'], { stdio: 'ignore', detached: true });
  d.unref();
  return { pids: [c.pid, d.pid] };
} };
`}},
	// CommonJS, a class instance (methods need their this), every call mode.
	"Common": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct","timeout":4000},
"configSchema":{"COUNT":"integer","FLAG":"boolean"}`, map[string]string{
		"config.env": "COUNT=7x\nFLAG=True\nWORD=hello\n",
		"index.js": `const fs = require('fs');
class Plugin {
  constructor() { this.calls = 0; this.config = null; }
  async initialize(config, deps) {
    this.config = config;
    deps.vcpLogFunctions.pushVcpLog({ hello: 'from initialize' });
    console.log('initialized; this goes to the log');
  }
  async processToolCall(args, ctx) {
    this.calls++;
    switch (args.mode) {
    case 'throw': throw new Error('boom: ' + args.why);
    case 'reject-object': return { status: 'error', error: 'refused by the plugin' };
    case 'text': return 'plain text';
    case 'exit': process.exit(7);
    case 'crash': setImmediate(() => { throw new Error('stray'); }); return 'soon gone';
    case 'hang': return new Promise(() => {});
    case 'spin': for (;;) {}
    case 'heap': return { limit: require('v8').getHeapStatistics().heap_size_limit };
    case 'listen': return new Promise((resolve) => {
      ctx.signal.addEventListener('abort', () => {
        fs.writeFileSync(args.file, ctx.signal.reason.name + ': ' + ctx.signal.reason.message);
        resolve('aborted');
      });
    });
    case 'flood': {
      const chunk = 'x'.repeat(64 * 1024) + '\n';
      for (let i = 0; i < 320; i++) process.stdout.write(chunk);
      console.error('and some stderr');
      return { flooded: 320 * chunk.length };
    }
    }
    return { args, calls: this.calls, pluginName: ctx.pluginName, vcp: ctx._vcpContext === undefined ? 'absent' : ctx._vcpContext,
      signal: ctx.signal instanceof AbortSignal, config: this.config, env: process.env.WORD, cwd: process.cwd() };
  }
  async shutdown() { fs.writeFileSync('shutdown.txt', 'bye after ' + this.calls); }
}
module.exports = new Plugin();
`}},
	"HybridRoutes": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { processToolCall: async () => 'still works', registerApiRoutes(router) {} };\n",
	}},
	"Esm": {`"pluginType":"hybridservice","entryPoint":{"script":"main.mjs"},"communication":{"protocol":"direct"}`, map[string]string{
		"main.mjs": `export async function processToolCall(args, ctx) { return 'esm says ' + args.say + ' to ' + ctx.pluginName; }
export function initialize(config) { if (typeof config.PROJECT_BASE_PATH !== 'string') throw new Error('no PROJECT_BASE_PATH'); }
`}},
	"EsmDefault": {`"pluginType":"hybridservice","entryPoint":{"script":"main.mjs"},"communication":{"protocol":"direct"}`, map[string]string{
		"main.mjs": `export default { async processToolCall(args) { return { default: true, n: Number(args.n) + 1 }; } };
`}},
	"NeedsServer": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "const pm = require('../../Plugin.js');\nmodule.exports = { processToolCall: async () => pm };\n",
	}},
	"NeedsPackage": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "const x = require('vcpnode-no-such-package');\nmodule.exports = { processToolCall: async () => x };\n",
	}},
	"InitFails": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { initialize: async () => { throw new Error('no database\\nsecond line'); }, processToolCall: async () => 1 };\n",
	}},
	"InitFailsAnswers": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": `let db = null;
module.exports = {
  async initialize() { throw new Error('connect ECONNREFUSED 127.0.0.1:5432'); },
  async processToolCall(args) {
    if (!db) return { status: 'error', error: 'database not connected yet' };
    return { status: 'success', result: 'ok' };
  },
};
`}},
	"ServiceInitFails": {`"pluginType":"service","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { initialize() { throw new Error('no token'); } };\n",
	}},
	"ExitsOnLoad": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "console.error('fatal: no licence for this machine'); process.exit(3);\n",
	}},
	"NoProcess": {`"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { initialize() {} };\n",
	}},
	"Routes": {`"pluginType":"service","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": "module.exports = { initialize() {}, registerRoutes(app) { app.get('/x', () => {}); } };\n",
	}},
	"Bot": {`"pluginType":"service","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}`, map[string]string{
		"index.js": `const fs = require('fs');
let timer;
module.exports = {
  initialize(config) { fs.writeFileSync('started.txt', String(config.DebugMode)); timer = setInterval(() => {}, 1000); },
  shutdown() { clearInterval(timer); fs.writeFileSync('stopped.txt', 'ok'); },
};
`}},
}

// pluginRoot writes the named test plugins under a fresh Plugin dir.
func pluginRoot(tb testing.TB, names ...string) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "Plugin")
	for _, name := range names {
		tp, ok := testPlugins[name]
		if !ok {
			tb.Fatalf("no test plugin %q", name)
		}
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for file, content := range tp.files {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		m := `{"name":"` + name + `",` + tp.manifest + `}`
		if err := os.WriteFile(filepath.Join(dir, "plugin-manifest.json"), []byte(m), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// scanDirect returns the direct plugins under root, as the node's scan sees them.
func scanDirect(tb testing.TB, root string) []*plugin.DirectPlugin {
	tb.Helper()
	ph := plugin.NewHost(plugin.Options{Log: zerolog.Nop()})
	tb.Cleanup(func() { _ = ph.Close(context.Background()) })
	set, err := ph.Scan([]string{root})
	if err != nil {
		tb.Fatal(err)
	}
	if len(set.Invalid) > 0 {
		tb.Fatalf("invalid plugins: %v", set.Invalid)
	}
	return set.Direct
}

// newTestHost returns a host closed at the end of the test, which checks
// that every Node.js process was reaped.
func newTestHost(tb testing.TB, opts Options) *Host {
	tb.Helper()
	if opts.Grace == 0 {
		opts.Grace = time.Second
	}
	opts.Log = zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.InfoLevel)
	h := NewHost(opts)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			tb.Errorf("Close: %v", err)
		}
		if n := h.Running(); n != 0 {
			tb.Errorf("%d Node.js hosts still running after Close", n)
		}
	})
	return h
}

// loadPlugin loads the test plugin name in a new test host made with opts
// and returns the host and the plugin's tool.
func loadPlugin(tb testing.TB, opts Options, name string) (*Host, toolhost.Tool) {
	tb.Helper()
	h := newTestHost(tb, opts)
	return h, findTool(tb, h.Load(scanDirect(tb, pluginRoot(tb, name)), Settings{}), name)
}

func findTool(tb testing.TB, l Loaded, name string) toolhost.Tool {
	tb.Helper()
	for _, t := range l.Tools {
		if t.Spec().Name == name {
			return t
		}
	}
	tb.Fatalf("no tool %q; unsupported: %v", name, l.Unsupported)
	return nil
}

func unsupportedReason(l Loaded, name string) string {
	for _, e := range l.Unsupported {
		if e.Name == name {
			return e.Reason
		}
	}
	return ""
}

// invoke calls t with string args and an optional _vcpContext.
func invoke(ctx context.Context, t toolhost.Tool, args map[string]string, vcp string) (any, error) {
	call := toolhost.Call{RequestID: "r", Args: map[string]json.RawMessage{}}
	for k, v := range args {
		b, _ := json.Marshal(v)
		call.Args[k] = b
	}
	if vcp != "" {
		call.Context = json.RawMessage(vcp)
	}
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
	}
	return t.Invoke(ctx, call)
}

func asJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// writeAndBump rewrites path and moves its time forward, so a rescan sees
// a change even within the file system's time granularity.
func writeAndBump(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		tb.Fatal(err)
	}
}
