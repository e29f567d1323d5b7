package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// diaryPlugin is a direct (Node.js) plugin in the style of DailyNote: it
// appends to a file in its own folder, uses its temporary directory and a
// built-in module, and answers with what it has.
const diaryPlugin = `const fs = require('fs'), os = require('os'), path = require('path'), crypto = require('crypto');
module.exports = {
  initialize(config) { this.base = config.PROJECT_BASE_PATH !== undefined; },
  async processToolCall(args) {
    fs.appendFileSync(path.join(__dirname, 'diary.txt'), args.entry + '\n');
    const scratch = path.join(os.tmpdir(), 'scratch.txt');
    fs.writeFileSync(scratch, args.entry);
    return { entries: fs.readFileSync(path.join(__dirname, 'diary.txt'), 'utf8').trim().split('\n'),
      scratch: fs.readFileSync(scratch, 'utf8'), sha256: crypto.createHash('sha256').update(args.entry).digest('hex'),
      pid: typeof process.pid, base: this.base };
  },
};
`

// mcpServerScript is an MCP stdio server in plain Python (newline-delimited
// JSON-RPC, no SDK): one tool that reads a data file of its own folder,
// writes its temporary directory and sums numbers.
var mcpServerScript = pythonMCPServer("pysum", "import tempfile",
	`{"name": "sum", "description": "Adds numbers.",
                   "inputSchema": {"type": "object", "properties": {"numbers": {"type": "string"}}, "required": ["numbers"]}}`, `
        nums = [float(x) for x in msg["params"]["arguments"]["numbers"].split(",")]
        with tempfile.NamedTemporaryFile("w+", delete=True) as f:
            f.write(str(sum(nums))); f.flush(); f.seek(0); total = f.read()
        unit = open("unit.txt").read().strip()
        reply(id, {"content": [{"type": "text", "text": total + " " + unit}], "structuredContent": {"count": len(nums)}})`)

// pythonMCPServer is an MCP stdio server in plain Python (newline-delimited
// JSON-RPC, no SDK) named name, with one tool (tool: its tools/list entry);
// call answers its tools/call (msg, id and reply in scope) and setup runs
// first.
func pythonMCPServer(name, setup, tool, call string) string {
	return `import json, os, sys
` + setup + `
def reply(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method, id = msg.get("method"), msg.get("id")
    if id is None:
        continue
    if method == "initialize":
        reply(id, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                   "serverInfo": {"name": "` + name + `", "version": "1.0"}})
    elif method == "tools/list":
        reply(id, {"tools": [` + tool + `]})
    elif method == "tools/call":` + call + `
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no " + method}}) + "\n")
        sys.stdout.flush()
`
}

// TestSandboxDefaultAnswersLikeNone: the example plugins (Python, Node.js
// and sh, synchronous, asynchronous and static), a direct Node.js plugin
// and a Python MCP stdio server answer byte for byte the same under the
// default profile as under none, errors included: a plugin's own error does
// not mention the sandbox. Nothing they started outlives the node.
func TestSandboxDefaultAnswersLikeNone(t *testing.T) {
	needCommands(t, "python3", "node", "sh")
	sandboxtest.NeedLandlock(t)
	examples := examplePlugins(t)
	calls := []struct {
		tool string
		args map[string]string
	}{
		{"UnitConverter", map[string]string{"command": "Convert", "value": "10", "from": "km", "to": "mi"}},
		{"UnitConverter", map[string]string{"command": "ListUnits"}},
		{"UnitConverter", map[string]string{"command": "Convert", "value": "1", "from": "km", "to": "kg"}}, // an error
		{"TextStats", map[string]string{"command": "Count", "text": "One line. Two sentences!\nAnd a third line?"}},
		{"TextStats", map[string]string{"command": "TopWords", "text": "the cat and the hat and the bat", "limit": "2"}},
		{"DelayedEcho", map[string]string{"text": "later", "delay": "0"}},
		{"Diary", map[string]string{"entry": "first"}},
		{"Diary", map[string]string{"entry": "second"}},
		{"McpPysum", map[string]string{"numbers": "1,2,3.5"}},
	}
	// The task id DelayedEcho makes up for each call.
	taskID := regexp.MustCompile(`[0-9a-f]{12}`)
	outcomes := map[string][]string{}
	for _, profile := range []string{"none", "default"} {
		root := t.TempDir()
		writeFiles(t, map[string]string{
			filepath.Join(root, "Diary", "plugin-manifest.json"): `{"name":"Diary","pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct","timeout":120000}}`,
			filepath.Join(root, "Diary", "index.js"):             diaryPlugin,
		})
		mcpDir := t.TempDir()
		writeFiles(t, map[string]string{
			filepath.Join(mcpDir, "server.py"): mcpServerScript,
			filepath.Join(mcpDir, "unit.txt"):  "apples\n",
		})
		cfg := config.Default()
		cfg.Hub.URL, cfg.Hub.Key = "ws://127.0.0.1:1", testKey
		cfg.Node.ExposedTools = nil
		cfg.Plugins.Dirs = []string{examples, root}
		cfg.Plugins.StateDir = t.TempDir()
		cfg.Sandbox.Profile = profile
		cfg.MCP.Servers = map[string]config.MCPServerConfig{"pysum": {Command: "python3", Args: []string{"server.py"}, Cwd: mcpDir,
			Timeout: config.Duration(2 * time.Minute)}}
		cfg.Tools = map[string]config.ToolConfig{}
		for _, name := range []string{"UnitConverter", "TextStats", "DelayedEcho"} {
			cfg.Tools[name] = config.ToolConfig{Timeout: config.Duration(2 * time.Minute)} // a loaded machine
		}
		n, err := New(cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), WithGetenv(noEnv(t)))
		if err != nil {
			t.Fatal(err)
		}
		closed := false
		closeNode := func() {
			if !closed {
				closed = true
				n.CloseLocal()
			}
		}
		t.Cleanup(closeNode)
		for _, ts := range n.ToolStatuses().Tools {
			if ts.Sandbox != "" && ts.Sandbox != profile {
				t.Errorf("%s runs under %q, want %q", ts.Name, ts.Sandbox, profile)
			}
		}
		waitForTool(t, n, "McpPysum")
		for i, c := range calls {
			got := localOutcome(t, n, fmt.Sprintf("r%d", i), c.tool, c.args)
			if c.tool == "DelayedEcho" {
				got = taskID.ReplaceAllString(got, "<task>")
			}
			outcomes[profile] = append(outcomes[profile], got)
		}
		closeNode()
		// What the tools started is gone: no process is left in their folders.
		waitNoneIn(t, examples, root, mcpDir)
	}
	for i, c := range calls {
		none, def := outcomes["none"][i], outcomes["default"][i]
		if strings.Contains(def, "sandbox") {
			// The plugin's own error: the sandbox did not cause it.
			t.Errorf("%s %v: the sandbox is named in %s", c.tool, c.args, def)
		}
		if none != def {
			t.Errorf("%s %v answered differently:\nnone:    %s\ndefault: %s", c.tool, c.args, none, def)
		}
		if !strings.Contains(none, `"`) && !strings.HasPrefix(none, "error: ") {
			t.Errorf("%s %v: no answer: %s", c.tool, c.args, none)
		}
	}
	t.Logf("answers: %q", outcomes["default"])
}

// TestSandboxStaticPluginAndCommandAnswerLikeNone: the example static
// plugin (sh, reading /proc and running df) and a placeholder command give
// the same lines under default as under none; the values change by the
// second, so the labels are compared.
func TestSandboxStaticPluginAndCommandAnswerLikeNone(t *testing.T) {
	sandboxtest.NeedLandlock(t)
	labels := map[string]string{}
	for _, profile := range []string{"none", "default"} {
		cfg := config.Default()
		cfg.Plugins.Dirs = []string{examplePlugins(t)}
		cfg.Plugins.StateDir = t.TempDir()
		cfg.Sandbox.Profile = profile
		cfg.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Kernel", Command: "uname -s; ls /usr/bin/env; head -c 4 /dev/urandom | wc -c"}}
		resp, warnings, err := feed.Evaluate(t.Context(), cfg, nil, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, p := range resp.Placeholders {
			fmt.Fprintf(&b, "%s error=%q\n", p.Key, p.LastError)
			for _, line := range strings.Split(p.Value, "\n") {
				label, _, _ := strings.Cut(line, ":")
				if p.Key == "{{Kernel}}" {
					label = line
				}
				fmt.Fprintf(&b, "  %s\n", label)
			}
		}
		fmt.Fprintf(&b, "warnings %q\n", warnings)
		labels[profile] = b.String()
	}
	if labels["none"] != labels["default"] {
		t.Errorf("static plugin and command differ:\nnone:\n%s\ndefault:\n%s", labels["none"], labels["default"])
	}
	for _, want := range []string{"Host", "Load (1/5/15 min)", "Memory", "Disk /", "/usr/bin/env"} {
		if !strings.Contains(labels["default"], "  "+want+"\n") {
			t.Errorf("lacks the line %q:\n%s", want, labels["default"])
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForTool waits until the node offers tool (an MCP server lists its
// tools in the background once New's bounded wait is over).
func waitForTool(t *testing.T, n *Node, tool string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if !testwait.Poll(ctx, func() bool {
		return slices.ContainsFunc(n.ToolStatuses().Tools, func(ts controlapi.ToolStatus) bool { return ts.Name == tool })
	}) {
		t.Fatalf("no tool %s after 3 minutes: %+v", tool, n.MCPServers())
	}
}

// waitNoneIn waits until no running process has its working directory in
// one of dirs (the tools' folders), and fails naming those that stay.
func waitNoneIn(t *testing.T, dirs ...string) {
	t.Helper()
	var left []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !testwait.Poll(ctx, func() bool { left = processesIn(dirs); return len(left) == 0 }) {
		t.Fatalf("processes of the tools outlived the node: %v", left)
	}
}

// processesIn lists the running processes whose working directory is in
// one of dirs.
func processesIn(dirs []string) []string {
	var left []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || proctreetest.Gone(pid) {
			continue
		}
		for _, d := range dirs {
			if cwd == d || strings.HasPrefix(cwd, d+string(filepath.Separator)) {
				cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				left = append(left, fmt.Sprintf("%d (%s) in %s", pid, strings.ReplaceAll(string(cmd), "\x00", " "), cwd))
			}
		}
	}
	return left
}

// localOutcome calls tool on n as the owner would, with args encoded as
// JSON, and returns the result's text, or "error: " and the error.
func localOutcome[V any](t *testing.T, n *Node, id, tool string, args map[string]V) string {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range args {
		raw[k], _ = json.Marshal(v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	out := n.CallLocal(ctx, id, tool, raw)
	if out.Err != "" {
		return "error: " + out.Err
	}
	return string(out.Result)
}
