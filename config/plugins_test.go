package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPluginsConfigDecodes(t *testing.T) {
	doc := `
[plugins]
dirs = ["/srv/vcp/Plugin", "/opt/more/Plugin"]
pass_env = ["HTTPS_PROXY", "NO_PROXY"]
env_file = "/srv/vcp/config.env"
async_max_runtime = "1h"
max_output_bytes = 1048576
state_dir = "/var/lib/vcpnode-test"
watch = false
node = "/opt/node/bin/node"
`
	cfg, err := Parse([]byte(doc), "p.toml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	p := cfg.Plugins
	if len(p.Dirs) != 2 || p.PassEnv[1] != "NO_PROXY" || p.EnvFile != "/srv/vcp/config.env" ||
		p.AsyncMaxRuntime.D() != time.Hour || p.MaxOutputBytes != MiB || p.StateDir != "/var/lib/vcpnode-test" || p.Watch || p.Node != "/opt/node/bin/node" {
		t.Errorf("decoded %+v", p)
	}
	def := Default().Plugins
	if def.AsyncMaxRuntime.D() != 30*time.Minute || def.MaxOutputBytes != 16*MiB || !def.Watch || len(def.Dirs) != 0 {
		t.Errorf("defaults %+v", def)
	}
}

func TestPluginsConfigProblems(t *testing.T) {
	tests := []struct {
		name   string
		change func(*PluginsConfig)
		key    string
		msg    string
	}{
		{"relative dir", func(p *PluginsConfig) { p.Dirs = []string{"Plugin"} }, "plugins.dirs[0]", "not an absolute path"},
		{"empty dir", func(p *PluginsConfig) { p.Dirs = []string{""} }, "plugins.dirs[0]", "is empty"},
		{"duplicate dir", func(p *PluginsConfig) { p.Dirs = []string{"/a/Plugin", "/a/Plugin/"} }, "plugins.dirs[1]", "already plugins.dirs[0]"},
		{"bad env name", func(p *PluginsConfig) { p.PassEnv = []string{"HTTP PROXY"} }, "plugins.pass_env[0]", "not an environment variable name"},
		{"env name starting with a digit", func(p *PluginsConfig) { p.PassEnv = []string{"1X"} }, "plugins.pass_env[0]", "not an environment variable name"},
		{"the key variable", func(p *PluginsConfig) { p.PassEnv = []string{"PATH", EnvKey} }, "plugins.pass_env[1]", "never passed to plugins"},
		{"env listed twice", func(p *PluginsConfig) { p.PassEnv = []string{"A", "A"} }, "plugins.pass_env[1]", "listed twice"},
		{"relative env file", func(p *PluginsConfig) { p.EnvFile = "config.env" }, "plugins.env_file", "not an absolute path"},
		{"relative state dir", func(p *PluginsConfig) { p.StateDir = "state" }, "plugins.state_dir", "not an absolute path"},
		{"relative node", func(p *PluginsConfig) { p.Node = "node" }, "plugins.node", "not an absolute path"},
		{"zero async runtime", func(p *PluginsConfig) { p.AsyncMaxRuntime = 0 }, "plugins.async_max_runtime", "at least 1s"},
		{"tiny output cap", func(p *PluginsConfig) { p.MaxOutputBytes = 100 }, "plugins.max_output_bytes", "between 1024"},
		{"huge output cap", func(p *PluginsConfig) { p.MaxOutputBytes = 2 << 30 }, "plugins.max_output_bytes", "between 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			tt.change(&cfg.Plugins)
			var ce *Error
			if err := cfg.Validate(); !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *Error", err)
			}
			if len(ce.Problems) != 1 || ce.Problems[0].Key != tt.key || !strings.Contains(ce.Problems[0].Message, tt.msg) {
				t.Errorf("problems %v, want one at %s containing %q", ce.Problems, tt.key, tt.msg)
			}
		})
	}
}

func TestStateDirectory(t *testing.T) {
	tests := []struct {
		name     string
		stateDir string
		env      map[string]string
		euid     int
		want     string
	}{
		{"configured", "/srv/state", map[string]string{"STATE_DIRECTORY": "/var/lib/x"}, 0, "/srv/state"},
		{"systemd", "", map[string]string{"STATE_DIRECTORY": "/var/lib/vcpnode", "HOME": "/home/u"}, 1000, "/var/lib/vcpnode"},
		{"systemd, several", "", map[string]string{"STATE_DIRECTORY": "/var/lib/a:/var/lib/b"}, 1000, "/var/lib/a"},
		{"root", "", map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/root/.state"}, 0, "/var/lib/vcpnode"},
		{"xdg", "", map[string]string{"XDG_STATE_HOME": "/home/u/.st", "HOME": "/home/u"}, 1000, "/home/u/.st/vcpnode"},
		{"relative xdg is ignored", "", map[string]string{"XDG_STATE_HOME": "st", "HOME": "/home/u"}, 1000, "/home/u/.local/state/vcpnode"},
		{"home", "", map[string]string{"HOME": "/home/u"}, 1000, "/home/u/.local/state/vcpnode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PluginsConfig{StateDir: tt.stateDir}
			got, err := p.StateDirectory(func(k string) string { return tt.env[k] }, tt.euid)
			if err != nil || got != tt.want {
				t.Errorf("StateDirectory = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	_, err := PluginsConfig{}.StateDirectory(func(string) string { return "" }, 1000)
	if !errors.Is(err, ErrNoStateDir) || !strings.Contains(err.Error(), "state_dir") {
		t.Errorf("no environment: %v, want ErrNoStateDir naming state_dir", err)
	}
}
