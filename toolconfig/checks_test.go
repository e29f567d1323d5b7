package toolconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

// TestCheckFindsEachProblem: each setting the tool subsystems judge is a
// problem of its own, at its key, when the config is validated with Check.
func TestCheckFindsEachProblem(t *testing.T) {
	command := func(c config.CommandPlaceholderConfig) func(*config.Config) {
		return func(cfg *config.Config) { cfg.Placeholders.Command = []config.CommandPlaceholderConfig{c} }
	}
	tests := []struct {
		name   string
		mutate func(*config.Config)
		key    string
		msg    string
	}{
		{"warm language", func(c *config.Config) { c.Plugins.Warm = "python, ruby" }, "plugins.warm", `"ruby" is not a language that can be kept warm (python, node)`},
		{"warm pool zero", func(c *config.Config) { c.Plugins.WarmPool = 0 }, "plugins.warm_pool", "between 1 and 4 (got 0)"},
		{"warm pool big", func(c *config.Config) { c.Plugins.WarmPool = 5 }, "plugins.warm_pool", "between 1 and 4"},
		{"preload name", func(c *config.Config) {
			c.Tools = map[string]config.ToolConfig{"P": {Preload: []string{"json", "os; x"}}}
		}, "tools.P.preload[1]", `"os; x" is not a Python module name`},
		{"preload twice", func(c *config.Config) {
			c.Tools = map[string]config.ToolConfig{"P": {Preload: []string{"json", "os", "json"}}}
		}, "tools.P.preload[2]", `"json" is listed twice`},
		{"preload not warm", func(c *config.Config) {
			no := false
			c.Tools = map[string]config.ToolConfig{"P": {Warm: &no, Preload: []string{"json"}}}
		}, "tools.P.preload", "this tool has warm = false"},
		{"preload too many", func(c *config.Config) {
			many := make([]string, 65)
			for i := range many {
				many[i] = fmt.Sprintf("m%d", i)
			}
			c.Tools = map[string]config.ToolConfig{"P": {Preload: many}}
		}, "tools.P.preload", "at most 64"},
		{"value name", func(c *config.Config) { c.Placeholders.Values = map[string]string{"a b": "x"} }, `placeholders.values."a b"`, "invalid placeholder key"},
		{"both forms of one value", func(c *config.Config) { c.Placeholders.Values = map[string]string{"A": "1", "{{A}}": "2"} },
			`placeholders.values."{{A}}"`, "{{A}} is already defined by placeholders.values.A"},
		{"bad cron", command(config.CommandPlaceholderConfig{Name: "D", Command: "date", Cron: "* * *"}), "placeholders.command[0].cron", "invalid schedule"},
		{"command and value", func(c *config.Config) {
			c.Placeholders.Values = map[string]string{"DevBoxOwner": "Alice"}
			c.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "{{DevBoxOwner}}", Command: "whoami"}}
		}, "placeholders.command[0].name", "{{DevBoxOwner}} is already defined by placeholders.values.DevBoxOwner"},
		{"system and command", func(c *config.Config) {
			c.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "DevBoxStatus", Command: "uptime"}}
			c.Placeholders.System = config.SystemPlaceholderConfig{Enabled: true, Name: "DevBoxStatus"}
		}, "placeholders.system.name", "already defined by placeholders.command[0].name"},
		{"mcp tool name", func(c *config.Config) {
			c.MCP.Servers = map[string]config.MCPServerConfig{"named": {Command: "x", Tool: "bad name"}}
		}, "mcp.servers.named.tool", `"bad name": a VCP tool name`},
		{"mcp tool twice", func(c *config.Config) {
			c.MCP.Servers = map[string]config.MCPServerConfig{"a-b": {Command: "x"}, "a_b": {Command: "x"}}
		}, "mcp.servers.a_b.tool", `"McpAB" is already the tool of mcp.servers.a-b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := config.Default()
			tt.mutate(&c)
			if err := c.Validate(); err != nil {
				t.Fatalf("config's own checks: %v", err)
			}
			err := c.Validate(Check)
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate(Check) = %v, want a *config.Error", err)
			}
			if len(ce.Problems) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(ce.Problems), err)
			}
			if p := ce.Problems[0]; p.Key != tt.key || !strings.Contains(p.Message, tt.msg) {
				t.Errorf("problem = %s, want key %s and message containing %q", p, tt.key, tt.msg)
			}
		})
	}
}

func TestFilesMaxBytesMustFitInAFrame(t *testing.T) {
	largest := files.MaxBytesFor(config.ServerFrameLimit)
	c := config.Default()
	c.Files.Roots = []string{"/srv"}
	c.Files.MaxBytes = largest
	// node.max_result_bytes bounds ordinary results, not files.
	c.Node.MaxResultBytes = 2 * config.KiB
	if err := c.Validate(Check); err != nil {
		t.Errorf("max_bytes = largest (%d): %v", largest, err)
	}
	c.Files.MaxBytes = largest + 1
	err := c.Validate(Check)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the largest allowed value is %d", largest)) {
		t.Errorf("max_bytes = largest+1: %v, want the largest value named", err)
	}
	// Serving is off without roots, so the cap is not checked.
	c.Files.Roots = nil
	if err := c.Validate(Check); err != nil {
		t.Errorf("without roots: %v", err)
	}
}

// TestExample: the example config passes the tools' checks too, and names
// the largest files.max_bytes the file tool can carry.
func TestExample(t *testing.T) {
	path := filepath.Join("..", "config.example.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(data, path, Check); err != nil {
		t.Errorf("the example: %v", err)
	}
	if want := fmt.Sprintf("at most %d", files.MaxBytesFor(config.ServerFrameLimit)); !strings.Contains(string(data), want) {
		t.Errorf("the example should say %q", want)
	}
}
