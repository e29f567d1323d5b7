package node

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestOneProcessTreeManager: a stdio plugin, a direct plugin's Node.js
// host, an MCP stdio server and a placeholder command all run as trees of
// the node's one Manager (one cgroup platform, or one /proc walker and its
// SIGCHLD handling, per daemon), made once: proctree logs each Manager it
// makes ("process tree tracking").
func TestOneProcessTreeManager(t *testing.T) {
	needCommands(t, "node")
	plugins := t.TempDir()
	writePlugin(t, plugins, "Hybrid", directManifest("Hybrid"), map[string]string{"index.js": pidScript})
	writePlugin(t, plugins, "Said", `{"name":"Said","pluginType":"synchronous","entryPoint":{"command":"echo said"},`+
		`"communication":{"protocol":"stdio","timeout":60000}}`, nil)
	mcpDir := t.TempDir()
	exe, env := stdioMCPServer(t, mcpDir)
	opt := pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServerConfig{"one": {Command: exe, Env: env, Cwd: mcpDir}}
		c.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Stamp", Command: "echo stamped", Every: config.Duration(time.Hour)}}
	})
	h := startHarness(t, opt)
	c := h.accept()
	alivePid(t, filepath.Join(mcpDir, "pid"))
	for _, tool := range []string{"Said", "Hybrid", "McpOne"} {
		if res := h.call(c, tool, nil); res.Status != wsproto.StatusSuccess {
			t.Fatalf("%s answered %+v", tool, res)
		}
	}
	h.waitUntil("the placeholder command to run", func() bool {
		for _, p := range h.node.Placeholders().Placeholders {
			if p.Value == "stamped" {
				return true
			}
		}
		return false
	})
	if n := strings.Count(h.logs.String(), `"process tree tracking"`); n != 1 {
		t.Errorf("%d process tree Managers made, want the node's one:\n%s", n, h.logs.String())
	}
}
