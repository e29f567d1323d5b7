package toolconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// TestSandboxConfigErrors: an unknown profile, a relative path, a memory
// that is no size and a profile extending itself are each an error with
// its position.
func TestSandboxConfigErrors(t *testing.T) {
	body := `[hub]
url = "ws://127.0.0.1:1"
key = "k"

[sandbox]
profile = "strict"

[sandbox.profiles.rel]
read = ["data/x"]

[sandbox.profiles.big]
memory = "lots"

[sandbox.profiles.loop]
extends = "loop"

[tools.Weather]
sandbox = "nosuch"

[mcp.servers.fs]
command = "npx"
sandbox = "missing"
`
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path, Check)
	if err == nil {
		t.Fatal("Load accepted the bad [sandbox]")
	}
	for _, want := range []string{
		`6:1: sandbox.profile: unknown sandbox profile "strict"`,
		`9:1: sandbox.profiles.rel.read`, `is relative`,
		`12:1: sandbox.profiles.big.memory`, `"lots" is not a size`,
		`15:1: sandbox.profiles.loop.extends`, `extends itself`,
		`18:1: tools.Weather.sandbox: unknown sandbox profile "nosuch"`,
		`22:1: mcp.servers.fs.sandbox: unknown sandbox profile "missing"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestSandboxOptionsProtectNodeFiles: the config, key file, state
// directory and audit log are protected.
func TestSandboxOptionsProtectNodeFiles(t *testing.T) {
	c := config.Default()
	c.Hub.KeyFile = "/etc/vcpnode/key"
	c.Audit.File = "/var/log/vcpnode/audit.jsonl"
	c.Plugins.StateDir = "/var/lib/vcpnode"
	c.Tools = map[string]config.ToolConfig{"Weather": {Sandbox: "offline"}}
	o, err := SandboxOptions(c, "/etc/vcpnode/config.toml", func(string) string { return "" }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/etc/vcpnode/key", "/var/log/vcpnode/audit.jsonl", "/var/lib/vcpnode", "/etc/vcpnode/config.toml"} {
		if !strings.Contains(strings.Join(o.Protected, "\n")+"\n", p+"\n") {
			t.Errorf("%s is not protected: %q", p, o.Protected)
		}
	}
	if o.Tools["Weather"] != "offline" {
		t.Errorf("tools: %v", o.Tools)
	}
}
