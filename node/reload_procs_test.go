package node

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/wsproto"
)

// pidScript is a direct plugin that leaves the pid of its Node.js host in
// its folder when its module is initialized, answers with it, and counts
// its shutdown() calls.
const pidScript = `const fs = require('fs');
module.exports = {
  async initialize() { fs.writeFileSync('pid.txt', String(process.pid)); },
  async processToolCall() { return 'host ' + process.pid; },
  async shutdown() { fs.appendFileSync('shutdowns.txt', 'x'); },
};
`

func directManifest(name string) string {
	return `{"name":"` + name + `","pluginType":"hybridservice","description":"a direct plugin","entryPoint":{"script":"index.js"},` +
		`"communication":{"protocol":"direct","timeout":20000}}`
}

// alivePid reads the pid in path, written by a process working in the
// file's folder, and says whether that process runs. A confined process
// writes the pid of its PID namespace: the pid returned is this
// process's view of it.
func alivePid(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(fileText(path))
	if err != nil {
		t.Fatalf("%s holds no pid: %v", path, err)
	}
	if host := proctreetest.HostPid(pid, filepath.Dir(path)); host != 0 {
		pid = host
	}
	if err := signalPid(pid, syscall.Signal(0)); err != nil {
		t.Errorf("process %d (from %s) is gone: %v", pid, path, err)
	}
	return pid
}

// A reload refused after it would have started, restarted and stopped
// processes (a new MCP server, a changed one, a changed direct plugin, a
// new direct plugin) changes no process: the same MCP server and Node.js
// host keep running, the new ones never start, and everything the node
// shows stays as it was. The accepted reload then does all of it.
func TestRefusedReloadStartsAndStopsNothing(t *testing.T) {
	needCommands(t, "node")
	plugins := t.TempDir()
	writePlugin(t, plugins, "Hybrid", directManifest("Hybrid"), map[string]string{"index.js": pidScript})
	oneDir, twoDir := t.TempDir(), t.TempDir()
	exe, oneEnv := stdioMCPServer(t, oneDir)
	_, twoEnv := stdioMCPServer(t, twoDir)
	opt := pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"one": {Command: exe, Env: oneEnv, Cwd: oneDir}}
	})
	h := startHarness(t, opt)
	c := h.accept()
	if names, _ := registered(t, h, c); !slices.Contains(names, "Hybrid") || !slices.Contains(names, "McpOne") {
		t.Fatalf("registered %v, want Hybrid and McpOne", names)
	}
	hybrid := filepath.Join(plugins, "Hybrid")
	onePid := alivePid(t, filepath.Join(oneDir, "pid"))
	hostPid := alivePid(t, filepath.Join(hybrid, "pid.txt"))
	shows := func() string {
		st := h.node.MCPServers()
		return observables(t, h.node) + "\nmcp " + strings.TrimSpace(strings.Join(func() []string {
			var out []string
			for _, s := range st {
				out = append(out, s.Name+" "+string(s.State)+" "+s.Since.String()+" "+strconv.Itoa(s.Restarts))
			}
			return out
		}(), "; ")) + "\nprocesses " + strconv.Itoa(h.node.PluginProcesses())
	}
	before := shows()

	changedOne := maps.Clone(oneEnv)
	changedOne["CHANGED"] = "1" // a changed server: restarted when committed
	cfg := h.node.Config()
	cfg.Tools = maps.Clone(cfg.Tools)                      // the map of the config in force is not ours to change
	cfg.Tools["Hybrid"] = config.ToolConfig{MaxMemory: 64} // a changed direct plugin: reloaded when committed
	refused := func(what string, cfg config.Config, clash string) {
		t.Helper()
		_, err := h.node.Reload(cfg)
		if err == nil || !strings.Contains(err.Error(), "old one stays in force") || !strings.Contains(err.Error(), clash) {
			t.Fatalf("%s: Reload = %v, want a refusal naming %s and saying the old config stays", what, err, clash)
		}
		if after := shows(); after != before {
			t.Errorf("%s: a refused reload changed what the node shows:\nbefore %s\nafter  %s", what, before, after)
		}
		if _, err := os.Stat(filepath.Join(twoDir, "pid")); err == nil {
			t.Errorf("%s: the new MCP server was started by a refused reload", what)
		}
		if got := alivePid(t, filepath.Join(oneDir, "pid")); got != onePid {
			t.Errorf("%s: the MCP server was restarted (pid %d, was %d)", what, got, onePid)
		}
		if got := alivePid(t, filepath.Join(hybrid, "pid.txt")); got != hostPid {
			t.Errorf("%s: the direct plugin was reloaded (pid %d, was %d)", what, got, hostPid)
		}
		if got := fileText(filepath.Join(hybrid, "shutdowns.txt")); got != "" {
			t.Errorf("%s: the direct plugin's shutdown() ran %d times", what, len(got))
		}
		if res := h.call(c, "Hybrid", nil); res.Status != wsproto.StatusSuccess || firstText(t, res) != "host "+fileText(filepath.Join(hybrid, "pid.txt")) {
			t.Errorf("%s: Hybrid answered %+v", what, res)
		}
		if res := h.call(c, "McpOne", nil); res.Status != wsproto.StatusSuccess || firstText(t, res) != "hello from "+fileText(filepath.Join(oneDir, "pid")) {
			t.Errorf("%s: McpOne answered %+v", what, res)
		}
	}

	// A new MCP server whose tool is named like the in-process Echo.
	cfg.MCP.Servers = map[string]config.MCPServerConfig{"one": {Command: exe, Env: changedOne, Cwd: oneDir}, "two": {Command: exe, Env: twoEnv, Tool: "Echo", Cwd: twoDir}}
	refused("an MCP tool name taken", cfg, `"Echo"`)

	// A new direct plugin named like the in-process Echo.
	echoDir := filepath.Join(plugins, "EchoDirect")
	writePlugin(t, plugins, "EchoDirect", directManifest("Echo"), map[string]string{"index.js": pidScript})
	cfg.MCP.Servers = map[string]config.MCPServerConfig{"one": {Command: exe, Env: changedOne, Cwd: oneDir}, "two": {Command: exe, Env: twoEnv, Cwd: twoDir}}
	refused("a direct plugin's tool name taken", cfg, `"Echo"`)
	if _, err := os.Stat(filepath.Join(echoDir, "pid.txt")); err == nil {
		t.Error("the clashing direct plugin was started by a refused reload")
	}
	select {
	case <-c.Done():
		t.Error("a refused reload made the node reconnect")
	default:
	}

	// Without the clash it all happens.
	if err := os.RemoveAll(echoDir); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	c = h.accept() // McpTwo is new: the node reconnects
	if names, _ := registered(t, h, c); !slices.Contains(names, "McpTwo") {
		t.Errorf("registered %v after the accepted reload, want McpTwo too", names)
	}
	alivePid(t, filepath.Join(twoDir, "pid"))
	if got := alivePid(t, filepath.Join(oneDir, "pid")); got == onePid {
		t.Error("the changed MCP server was not restarted")
	}
	if got := alivePid(t, filepath.Join(hybrid, "pid.txt")); got == hostPid {
		t.Error("the changed direct plugin was not reloaded")
	}
	if got := fileText(filepath.Join(hybrid, "shutdowns.txt")); got != "x" {
		t.Errorf("the replaced module's shutdown() calls: %q", got)
	}
}
