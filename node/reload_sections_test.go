package node

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// TestReloadRulesCoverEveryTable: a table added to the config without a
// row in reloadRules would change without the reload saying so.
func TestReloadRulesCoverEveryTable(t *testing.T) {
	var rows []string
	for _, r := range reloadRules {
		rows = append(rows, r.section)
	}
	ct := reflect.TypeFor[config.Config]()
	for i := range ct.NumField() {
		tag, _, _ := strings.Cut(ct.Field(i).Tag.Get("toml"), ",")
		if !slices.Contains(rows, tag) {
			t.Errorf("[%s] (config.Config.%s) has no row in reloadRules: say what a reload does with it", tag, ct.Field(i).Name)
		}
	}
}

// TestReloadNamesEverySectionItCannotApply: each table a reload does not
// apply is named in the report's RestartNeeded, and each changed table in
// Changed; a table it applies is not said to need a restart.
func TestReloadNamesEverySectionItCannotApply(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	base := h.node.Config()
	const nodeKept = "node.max_concurrent, node.queue, node.max_result_bytes, node.mode and node.register"
	cases := []struct {
		section, restart string // restart "": applied by the reload
		change           func(*config.Config)
	}{
		{"observer", "observer", func(c *config.Config) { c.Observer.Buffer = base.Observer.Buffer + 1 }},
		{"log", "log", func(c *config.Config) { c.Log.Level = "debug" }},
		{"console", "console", func(c *config.Config) { c.Console.IdleTimeout = base.Console.IdleTimeout + config.Duration(60e9) }},
		{"metrics", "metrics", func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:9464" }},
		{"node", nodeKept, func(c *config.Config) { c.Node.MaxConcurrent = base.Node.MaxConcurrent + 1 }},
		{"node", nodeKept, func(c *config.Config) { c.Node.Register = false }},
		{"node", nodeKept, func(c *config.Config) { c.Node.Mode = config.ModeBoth }},
		{"node", "", func(c *config.Config) { c.Node.HiddenTools = []string{"NodeInfo"} }},
		{"audit", "", func(c *config.Config) { c.Audit.File = t.TempDir() + "/audit.jsonl" }},
	}
	for _, c := range cases {
		t.Run(c.section+"/"+c.restart, func(t *testing.T) {
			cfg := base
			c.change(&cfg)
			rep, err := h.node.Reload(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rep.Changed, []string{c.section}) {
				t.Errorf("changed = %q, want [%s]", rep.Changed, c.section)
			}
			var want []string
			if c.restart != "" {
				want = []string{c.restart}
			}
			if !slices.Equal(rep.RestartNeeded, want) {
				t.Errorf("restart needed = %q, want %q", rep.RestartNeeded, want)
			}
			if _, err := h.node.Reload(base); err != nil {
				t.Fatal(err)
			}
		})
	}
}
