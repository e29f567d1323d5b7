package toolconfig

import (
	"slices"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// TestWarmConfig: [plugins] warm and warm_pool and [tools.NAME] warm make
// the plugin host's WarmConfig.
func TestWarmConfig(t *testing.T) {
	doc := `
[plugins]
warm = " python ,"
warm_pool = 3
[tools.Slow]
warm = false
[tools.Fast]
warm = true
preload = ["json", "xml.etree.ElementTree"]
[tools.Other]
timeout = "5s"
`
	cfg, err := config.Parse([]byte(doc), "w.toml", Check)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := cfg.Validate(Check); err != nil {
		t.Fatal(err)
	}
	w := WarmConfig(cfg)
	if len(w.Languages) != 1 || w.Languages[0] != "python" || w.Size != 3 ||
		len(w.Tools) != 2 || w.Tools["Slow"] || !w.Tools["Fast"] ||
		len(w.Preload) != 1 || !slices.Equal(w.Preload["Fast"], []string{"json", "xml.etree.ElementTree"}) {
		t.Errorf("WarmConfig = %+v", w)
	}
	if def := WarmConfig(config.Default()); len(def.Languages) != 0 || def.Size != 1 || len(def.Tools) != 0 || len(def.Preload) != 0 {
		t.Errorf("default WarmConfig = %+v", def)
	}
	if ws := Warnings(cfg); len(ws) != 0 {
		t.Errorf("warnings %q", ws)
	}
}

// TestPreloadWithoutWarmWarns: a preload on a tool that nothing makes warm
// is accepted, with a warning saying how to make it count.
func TestPreloadWithoutWarmWarns(t *testing.T) {
	c := config.Default()
	c.Tools = map[string]config.ToolConfig{"Cold": {Preload: []string{"json"}}}
	if err := c.Validate(Check); err != nil {
		t.Fatal(err)
	}
	want := []string{`tools.Cold.preload has no effect: the tool is not warm (set warm = true there, or [plugins] warm = "python")`}
	if ws := Warnings(c); !slices.Equal(ws, want) {
		t.Errorf("warnings %q, want %q", ws, want)
	}
	c.Plugins.Warm = "node, python"
	if ws := Warnings(c); len(ws) != 0 {
		t.Errorf("with [plugins] warm python: warnings %q", ws)
	}
}
