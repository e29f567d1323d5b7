package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// The npm packages installed where people install them.
const (
	mcpFilesystem = "@modelcontextprotocol/server-filesystem"
	mcpEverything = "@modelcontextprotocol/server-everything"
)

// npmSetup is a test's npm: a home, a cache shared by the tests of one
// run (downloads happen once), a global prefix of its own.
type npmSetup struct {
	home, cache, prefix string
	env                 []string
}

func newNPM(t *testing.T) *npmSetup {
	t.Helper()
	needCommands(t, "node", "npm", "npx")
	if testing.Short() {
		t.Skip("-short: this test installs npm packages from the registry")
	}
	cache := filepath.Join(os.Getenv("STATE_DIRECTORY"), "npm-cache") // the run's own folder, removed after the run
	if os.Getenv("STATE_DIRECTORY") == "" {
		cache = t.TempDir()
	}
	n := &npmSetup{home: t.TempDir(), cache: cache, prefix: filepath.Join(t.TempDir(), "global")}
	n.env = []string{"HOME=" + n.home, "npm_config_cache=" + n.cache, "npm_config_prefix=" + n.prefix,
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false", "npm_config_prefer_offline=true"}
	return n
}

// npm runs npm in dir; a registry that cannot be reached skips the test,
// saying so (it fails in CI, which has the registry).
func (n *npmSetup) npm(t *testing.T, dir string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), n.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := fmt.Sprintf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		if os.Getenv("CI") == "" && regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network`).Match(out) {
			t.Skipf("the npm registry cannot be reached: %s", msg)
		}
		t.Fatal(msg)
	}
}

// npxConfined runs `npx -y PKG` for each package under the default
// profile, stdin closed (an MCP stdio server then ends), and fails unless
// it ends well.
func (n *npmSetup) npxConfined(t *testing.T, pkgs ...string) {
	t.Helper()
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		t.Skipf("no process trees here: %v", err)
	}
	defer trees.Close()
	sb, err := sandbox.New(sandbox.Options{Trees: trees, TempDir: t.TempDir(), Home: n.home})
	if err != nil {
		t.Fatal(err)
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatal(err)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, pkg := range pkgs {
		r, err := sb.Wrap(sandbox.Command{Tool: "npx", Kind: "MCP server", Path: npx, Args: []string{"npx", "-y", pkg},
			Env: append(os.Environ(), n.env...), Dir: ""})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		proc, tree, err := r.StartProcess(trees, &os.ProcAttr{Files: []*os.File{devNull, pw, pw}})
		pw.Close()
		if err != nil {
			t.Fatal(err)
		}
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			buf := make([]byte, 4096)
			for {
				k, err := pr.Read(buf)
				out.Write(buf[:k])
				if err != nil {
					return
				}
			}
		}()
		timer := time.AfterFunc(4*time.Minute, func() { _ = proc.Kill() })
		state, err := proc.Wait()
		timer.Stop()
		_ = tree.KillAndWait(5 * time.Second)
		tree.Release()
		<-copied
		pr.Close()
		if err != nil || !state.Success() {
			t.Fatalf("npx -y %s under default: %v %v\n%s", pkg, state, r.Explain(err, []byte(out.String())), out.String())
		}
		r.Close()
	}
}

// vcpToolBoxTree lays out a plugin tree as VCPToolBox and the official
// node do: ROOT/node_modules (a real npm package), ROOT/modules (the
// tree's own shared code), ROOT/Plugin/NAME holding a stdio, a direct and
// a static plugin that require both.
func vcpToolBoxTree(t *testing.T, n *npmSetup, root string) string {
	t.Helper()
	writeFiles(t, map[string]string{
		filepath.Join(root, "package.json"):      `{"name":"vcptoolbox-like","private":true}`,
		filepath.Join(root, "modules", "fmt.js"): "module.exports = { line: (s) => 'day: ' + s };\n",
		filepath.Join(root, "Plugin", "DayStdio", "plugin-manifest.json"): `{"name":"DayStdio","pluginType":"synchronous",` +
			`"entryPoint":{"command":"node day.js"},"communication":{"protocol":"stdio","timeout":60000}}`,
		filepath.Join(root, "Plugin", "DayStdio", "day.js"): `const dayjs = require('dayjs'); const fmt = require('../../modules/fmt.js');
let input = ''; process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => { const a = JSON.parse(input);
  console.log(JSON.stringify({ status: 'success', result: fmt.line(dayjs(a.date).add(1, 'day').format('YYYY-MM-DD dddd')) })); });
`,
		filepath.Join(root, "Plugin", "DayDirect", "plugin-manifest.json"): `{"name":"DayDirect","pluginType":"hybridservice",` +
			`"entryPoint":{"script":"index.js"},"communication":{"protocol":"direct","timeout":60000}}`,
		filepath.Join(root, "Plugin", "DayDirect", "index.js"): `const dayjs = require('dayjs'); const fmt = require('../../modules/fmt.js');
module.exports = { async processToolCall(args) { return { text: fmt.line(dayjs(args.date).subtract(1, 'day').format('YYYY-MM-DD dddd')) }; } };
`,
		filepath.Join(root, "Plugin", "DayStatic", "plugin-manifest.json"): `{"name":"DayStatic","pluginType":"static",` +
			`"entryPoint":{"command":"node static.js"},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{DayStatic}}"}]}}`,
		filepath.Join(root, "Plugin", "DayStatic", "static.js"): `const dayjs = require('dayjs'); const fmt = require('../../modules/fmt.js');
console.log(fmt.line(dayjs('2024-02-28').add(1, 'day').format('YYYY-MM-DD')));
`,
	})
	n.npm(t, root, "install", "dayjs")
	return filepath.Join(root, "Plugin")
}

// pyVenvServer is a stdio MCP server (plain Python, no SDK) in the home
// directory, run by a venv's interpreter there, importing a module
// installed in the venv. Its cwd is left unset.
func pyVenvServer(t *testing.T, home string) config.MCPServerConfig {
	t.Helper()
	venv := filepath.Join(home, "venv")
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv fails here: %v: %s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("no site-packages in the venv: %v %v", site, err)
	}
	script := strings.Replace(mcpServerScript, `unit = open("unit.txt").read().strip()`, `import unitlib; unit = unitlib.UNIT`, 1)
	writeFiles(t, map[string]string{
		filepath.Join(site[0], "unitlib.py"):    "UNIT = 'pears'\n",
		filepath.Join(home, "mcp", "server.py"): script,
	})
	return config.MCPServerConfig{Command: filepath.Join(venv, "bin", "python"), Args: []string{filepath.Join(home, "mcp", "server.py")},
		Env: map[string]string{"HOME": home}, Timeout: config.Duration(2 * time.Minute)}
}

// TestSandboxThirdPartyAnswersLikeNone: MCP servers from npm installed in
// a project folder outside the home, installed globally and started with
// npx -y (the default run first, so npx installs confined); a Python MCP
// server in a venv in the home; a plugin tree laid out as VCPToolBox lays
// it out, whose stdio, direct and static plugins require() its shared
// npm package and modules — all answer byte for byte the same under
// default as under none.
func TestSandboxThirdPartyAnswersLikeNone(t *testing.T) {
	t.Parallel() // mostly waiting on npm and the registry
	needCommands(t, "python3")
	sandboxtest.NeedLandlock(t)
	n := newNPM(t)
	project := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	n.npm(t, project, "init", "-y")
	n.npm(t, project, "install", mcpFilesystem, mcpEverything)
	n.npm(t, project, "install", "-g", mcpFilesystem, mcpEverything)
	// npx installs each package into its cache at its first start, which
	// takes longer than a server's start may on a busy machine: the first
	// start is one of its own, confined under default as the node would.
	n.npxConfined(t, mcpFilesystem, mcpEverything)
	plugins := vcpToolBoxTree(t, n, filepath.Join(n.home, "VCPToolBox"))
	data := t.TempDir()
	writeFiles(t, map[string]string{filepath.Join(data, "hello.txt"): "hello\n"})

	npmEnv := map[string]string{}
	for _, kv := range n.env {
		k, v, _ := strings.Cut(kv, "=")
		npmEnv[k] = v
	}
	server := func(command string, args ...string) config.MCPServerConfig {
		return config.MCPServerConfig{Command: command, Args: args, Env: npmEnv, Timeout: config.Duration(2 * time.Minute)}
	}
	servers := map[string]config.MCPServerConfig{
		"fsproject": server(filepath.Join(project, "node_modules", ".bin", "mcp-server-filesystem"), data),
		"evproject": server("node", filepath.Join(project, "node_modules", mcpEverything, "dist", "index.js")),
		"fsglobal":  server(filepath.Join(n.prefix, "bin", "mcp-server-filesystem"), data),
		"evglobal":  server(filepath.Join(n.prefix, "bin", "mcp-server-everything")),
		"fsnpx":     server("npx", "-y", mcpFilesystem, data),
		"evnpx":     server("npx", "-y", mcpEverything),
		"pyvenv":    pyVenvServer(t, n.home),
	}
	type call struct {
		tool string
		args map[string]any
	}
	var calls []call
	for _, where := range []string{"project", "global", "npx"} {
		fs, ev := "McpFs"+where, "McpEv"+where
		calls = append(calls,
			call{fs, map[string]any{"command": "list_allowed_directories"}},
			call{ev, map[string]any{"command": "echo", "message": "hi from " + where}},
			call{ev, map[string]any{"command": "get-sum", "a": 2, "b": 40}})
	}
	calls = append(calls,
		call{"McpPyvenv", map[string]any{"numbers": "1,2,3.5"}},
		call{"DayStdio", map[string]any{"date": "2024-02-28"}},
		call{"DayDirect", map[string]any{"date": "2024-03-01"}})

	outcomes := map[string][]string{}
	statics := map[string]string{}
	for _, profile := range []string{"default", "none"} {
		cfg := config.Default()
		cfg.Hub.URL, cfg.Hub.Key = "ws://127.0.0.1:1", testKey
		cfg.Node.ExposedTools = nil
		cfg.Plugins.Dirs = []string{plugins}
		cfg.Plugins.StateDir = t.TempDir()
		cfg.Sandbox.Profile = profile
		cfg.MCP.Servers = servers
		cfg.Tools = map[string]config.ToolConfig{"DayStdio": {Timeout: config.Duration(2 * time.Minute)}}
		nd, err := New(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), WithGetenv(noEnv(t)))
		if err != nil {
			t.Fatal(err)
		}
		// Servers that come up after New's bounded wait (npx installing)
		// are registered by the follower Run starts.
		stopFollow := nd.startFollow(t.Context())
		closed := false
		closeNode := func() {
			if !closed {
				closed = true
				stopFollow()
				nd.CloseLocal()
			}
		}
		t.Cleanup(closeNode)
		waitMCPRunning(t, nd)
		for _, c := range calls {
			waitForTool(t, nd, c.tool)
		}
		for i, c := range calls {
			outcomes[profile] = append(outcomes[profile], localOutcome(t, nd, fmt.Sprintf("r%d", i), c.tool, c.args))
		}
		closeNode()

		cfg.MCP.Servers = nil
		resp, _, err := feed.Evaluate(t.Context(), cfg, nil, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.Placeholders {
			statics[profile] += fmt.Sprintf("%s=%q error=%q\n", p.Key, p.Value, p.LastError)
		}
	}
	wants := map[string]string{"McpFs": data, "McpEv": "hi from", "McpPyvenv": "6.5 pears", "DayStdio": "day: 2024-02-29 Thursday", "DayDirect": "day: 2024-02-29 Thursday"}
	for i, c := range calls {
		none, def := outcomes["none"][i], outcomes["default"][i]
		if none != def {
			t.Errorf("%s %v answered differently:\nnone:    %s\ndefault: %s", c.tool, c.args, none, def)
		}
		for prefix, want := range wants {
			if strings.HasPrefix(c.tool, prefix) && c.args["command"] != "get-sum" && !strings.Contains(def, want) {
				t.Errorf("%s %v: %s lacks %q", c.tool, c.args, def, want)
			}
		}
		if c.args["command"] == "get-sum" && !strings.Contains(def, "42") {
			t.Errorf("%s get-sum: %s", c.tool, def)
		}
	}
	if statics["default"] != statics["none"] || !strings.Contains(statics["default"], `{{DayStatic}}="day: 2024-02-29"`) {
		t.Errorf("the static plugin:\nnone:    %s\ndefault: %s", statics["none"], statics["default"])
	}
	t.Logf("answers under default: %q", outcomes["default"])
}

// waitMCPRunning waits until every MCP server of n runs (npx may install
// its package first), and fails with their states if one does not.
func waitMCPRunning(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	if !testwait.Poll(ctx, func() bool {
		for _, st := range n.MCPServers() {
			if st.State != mcp.StateRunning {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("MCP servers not running after 4 minutes: %+v", n.MCPServers())
	}
}
