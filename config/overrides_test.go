package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A timeout override is held to [tools.NAME] timeout's own range; it is
// kept, applied, described and refused in a hand-edited file like one.
func TestToolOverrideTimeout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"45s", 45 * time.Second, ""},
		{" 2m ", 2 * time.Minute, ""},
		{"default", 0, ""},
		{"-5s", 0, "must be between 1s and"},
		{"0s", 0, "must be between 1s and"},
		{"999h", 0, "must be between 1s and"},
		{"soon", 0, `or "default"`},
		{"", 0, "invalid duration"},
	} {
		got, err := ParseToolTimeout(tc.in)
		if tc.err == "" && (err != nil || got.D() != tc.want) {
			t.Errorf("ParseToolTimeout(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseToolTimeout(%q) = %s, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
	// The config file's check says the same of the same value.
	c := Default()
	c.Tools = map[string]ToolConfig{"T": {Timeout: Duration(-5 * time.Second)}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "tools.T.timeout: must be between 1s and") {
		t.Errorf("config with a negative timeout: %v", err)
	}

	var o Overrides
	if err := o.Set("T", ToolOverride{Timeout: Duration(-time.Second)}); err == nil {
		t.Error("Set took a negative timeout")
	}
	if err := o.Set("T", ToolOverride{Timeout: Duration(45 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if d := o.Describe(); len(d) != 1 || d[0] != `[tools.T] timeout = "45s"` {
		t.Errorf("Describe = %q", d)
	}
	base := Default()
	base.Tools = map[string]ToolConfig{"T": {Timeout: Duration(time.Minute), MaxConcurrent: 2}}
	if got := o.Apply(base).Tools["T"]; got.Timeout.D() != 45*time.Second || got.MaxConcurrent != 2 {
		t.Errorf("applied: %+v", got)
	}
	if base.Tools["T"].Timeout.D() != time.Minute {
		t.Error("Apply changed the config it was given")
	}
	path := filepath.Join(t.TempDir(), OverridesFile)
	if err := o.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadOverrides(path)
	if err != nil || back.Tools["T"].Timeout.D() != 45*time.Second {
		t.Fatalf("loaded back: %+v, %v", back, err)
	}
	if err := o.Set("T", ToolOverride{}); err != nil || len(o.Tools) != 0 {
		t.Errorf("a zero override stays: %+v, %v", o, err)
	}
	if err := os.WriteFile(path, []byte(`{"tools":{"T":{"timeout":"-1s"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOverrides(path); err == nil || !strings.Contains(err.Error(), "T: timeout must be between") {
		t.Errorf("a hand-edited negative timeout: %v", err)
	}
}
