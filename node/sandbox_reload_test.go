package node

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// TestReloadRefusesBadSandboxInput: a reload from a file with an unknown
// profile name, a relative path, a memory that is no size or a profile
// extending itself is refused with the problem's position, and the
// profiles in force stay as they were.
func TestReloadRefusesBadSandboxInput(t *testing.T) {
	const good = `[hub]
url = "ws://127.0.0.1:1"
key = "` + testKey + `"

[sandbox]
profile = "mine"

[sandbox.profiles.mine]
extends = "default"
memory = "64MiB"
`
	path := filepath.Join(t.TempDir(), "config.toml")
	write := func(doc string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(good)
	cfg, err := config.Load(path, toolconfig.Check)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins.StateDir = t.TempDir()
	n, err := New(cfg, zerolog.Nop(), WithGetenv(noEnv(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.CloseLocal)
	before, _ := n.sandbox.Profile("mine")
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown profile", `profile = "mine"`, `profile = "nosuch"`, `:6:1: sandbox.profile: unknown sandbox profile "nosuch"`},
		{"relative path", `memory = "64MiB"`, "memory = \"64MiB\"\nread = [\"data/x\"]", `:11:1: sandbox.profiles.mine.read: path "data/x" is relative`},
		{"memory lots", `memory = "64MiB"`, `memory = "lots"`, `:10:1: sandbox.profiles.mine.memory: memory "lots" is not a size`},
		{"extends itself", `extends = "default"`, `extends = "mine"`, `:9:1: sandbox.profiles.mine.extends: profile "mine" extends itself`},
	} {
		t.Run(c.name, func(t *testing.T) {
			write(strings.Replace(good, c.old, c.new, 1))
			_, err := n.ReloadFile(path)
			if err == nil || !strings.Contains(err.Error(), path+c.want) || !strings.Contains(err.Error(), "the old one stays in force") {
				t.Errorf("reload: %v\nwant %q", err, path+c.want)
			}
			after, _ := n.sandbox.Profile("mine")
			if !reflect.DeepEqual(after, before) || n.sandbox.ProfileFor("AnyTool") != "mine" ||
				!reflect.DeepEqual(n.Config().Sandbox, cfg.Sandbox) {
				t.Errorf("after the refused reload: profile %+v (was %+v), default %q, config %+v",
					after, before, n.sandbox.ProfileFor("AnyTool"), n.Config().Sandbox)
			}
		})
	}
}
