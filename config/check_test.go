package config

import (
	"slices"
	"testing"
)

// TestKeyPaths: the paths a Check names its problems with, quoted as the
// file would quote the key.
func TestKeyPaths(t *testing.T) {
	if got := KeyPath("tools", "my tool", "sandbox"); got != `tools."my tool".sandbox` {
		t.Errorf("KeyPath = %s", got)
	}
	if got := IndexKey(KeyPath("tools", "P", "preload"), 2); got != "tools.P.preload[2]" {
		t.Errorf("IndexKey = %s", got)
	}
}

// TestWarmLanguages: [plugins] warm split at commas, blanks dropped.
func TestWarmLanguages(t *testing.T) {
	p := PluginsConfig{Warm: " python , ,node,"}
	if got := p.WarmLanguages(); !slices.Equal(got, []string{"python", "node"}) {
		t.Errorf("WarmLanguages = %q", got)
	}
	if got := (PluginsConfig{}).WarmLanguages(); len(got) != 0 {
		t.Errorf("no warm = %q", got)
	}
}

// TestSandboxToolsAndOwnFiles: who names a profile, under which key, and
// the node's own files no profile may grant.
func TestSandboxToolsAndOwnFiles(t *testing.T) {
	c := Default()
	c.Tools = map[string]ToolConfig{"Weather": {Sandbox: "offline"}, "Plain": {}}
	c.MCP.Servers = map[string]MCPServerConfig{"fs": {Command: "x", Sandbox: "strict"}}
	c.Placeholders.Command = []CommandPlaceholderConfig{{Name: "Load", Command: "uptime", Sandbox: "none"}}
	want := map[string]string{"Weather": "offline", MCPSandboxKey("fs"): "strict", PlaceholderSandboxKey("Load"): "none"}
	got := c.SandboxTools()
	if len(got) != len(want) {
		t.Errorf("SandboxTools = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("SandboxTools[%s] = %q, want %q", k, got[k], v)
		}
	}
	c.Hub.KeyFile, c.Audit.File, c.Plugins.StateDir = "/etc/vcpnode/key", "/var/log/vcpnode/audit.jsonl", "/var/lib/vcpnode"
	own := c.OwnFiles("/etc/vcpnode/config.toml", func(string) string { return "" }, 0)
	if !slices.Equal(own, []string{"/etc/vcpnode/key", "/var/log/vcpnode/audit.jsonl", "/etc/vcpnode/config.toml", "/var/lib/vcpnode"}) {
		t.Errorf("OwnFiles = %q", own)
	}
	if own := Default().OwnFiles("", func(string) string { return "" }, 1000); len(own) != 0 {
		t.Errorf("OwnFiles with nothing set and no home = %q", own)
	}
}

// TestSystemPlaceholderName: the node's name made a placeholder name.
func TestSystemPlaceholderName(t *testing.T) {
	c := Default()
	c.Hub.Name = "gpu box/2"
	if got := c.SystemPlaceholderName(); got != "gpu_box_2Status" {
		t.Errorf("SystemPlaceholderName = %q", got)
	}
	c.Placeholders.System.Name = "Mine"
	if got := c.SystemPlaceholderName(); got != "Mine" {
		t.Errorf("with a name set = %q", got)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{512: "512 bytes", 1536: "1.50 KiB", 3 * MiB / 2: "1.50 MiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
