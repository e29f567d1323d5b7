package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPlaceholderConfigProblems(t *testing.T) {
	cmd := func(c CommandPlaceholderConfig) func(*Config) {
		return func(cfg *Config) { cfg.Placeholders.Command = []CommandPlaceholderConfig{c} }
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
		msg    string
	}{
		{"push interval", func(c *Config) { c.Placeholders.PushInterval = Duration(time.Millisecond) }, "placeholders.push_interval", "at least 100ms"},
		{"min interval", func(c *Config) { c.Placeholders.MinInterval = -1 }, "placeholders.min_interval", "negative"},
		{"value empty", func(c *Config) { c.Placeholders.Values = map[string]string{"A": " "} }, "placeholders.values.A", "is empty"},
		{"command without name", cmd(CommandPlaceholderConfig{Command: "date"}), "placeholders.command[0].name", "is missing"},
		{"command without command", cmd(CommandPlaceholderConfig{Name: "D"}), "placeholders.command[0].command", "is missing"},
		{"every and cron", cmd(CommandPlaceholderConfig{Name: "D", Command: "date", Every: Duration(time.Minute), Cron: "* * * * *"}),
			"placeholders.command[0].cron", "not both"},
		{"negative every", cmd(CommandPlaceholderConfig{Name: "D", Command: "date", Every: -1}), "placeholders.command[0].every", "must be positive"},
		{"negative timeout", cmd(CommandPlaceholderConfig{Name: "D", Command: "date", Timeout: -1}), "placeholders.command[0].timeout", "must be positive"},
		{"system disk", func(c *Config) { c.Placeholders.System = SystemPlaceholderConfig{Enabled: true, Disk: "data"} },
			"placeholders.system.disk", "not an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			var ce *Error
			if err := c.Validate(); !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a *Error", err)
			}
			if len(ce.Problems) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(ce.Problems), ce)
			}
			if p := ce.Problems[0]; p.Key != tt.key || !strings.Contains(p.Message, tt.msg) {
				t.Errorf("problem = %s, want key %s and message containing %q", p, tt.key, tt.msg)
			}
		})
	}
}

// The example documents every [placeholders] setting, and its sample
// entries (## prose there) load when written out.
func TestExampleConfigPlaceholders(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"\n[placeholders]\n", "# push_interval = ", "# min_interval = ", "[placeholders.values]",
		"[[placeholders.command]]", "every = ", "cron = ", "timeout = ", "\n[placeholders.system]\n", "# enabled = ", "# disk = "} {
		if !strings.Contains(text, want) {
			t.Errorf("config.example.toml lacks %q", want)
		}
	}
	var sample []string
	for line := range strings.Lines(text) {
		if s, ok := strings.CutPrefix(line, "##   "); ok {
			sample = append(sample, s)
		}
	}
	if _, err := Parse([]byte(strings.Join(sample, "")), "example sample"); err != nil || len(sample) == 0 {
		t.Errorf("the example's sample placeholders (%d lines) do not load: %v", len(sample), err)
	}
}
