package config

import (
	"strings"
	"testing"
)

func TestModeAndItsOlderSpelling(t *testing.T) {
	for _, tc := range []struct {
		doc, mode string
	}{
		{"", ModeDistributed},
		{"[node]\nmode = \"observer\"\n", ModeObserver},
		{"[node]\nmode = \"both\"\n", ModeBoth},
		{"[observer]\nenabled = true\n", ModeBoth},
		{"[node]\nmode = \"both\"\n[observer]\nenabled = true\n", ModeBoth},
	} {
		cfg, err := Parse([]byte(tc.doc), "c.toml")
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if got := cfg.Mode(); got != tc.mode {
			t.Errorf("%q: mode %q, want %q", tc.doc, got, tc.mode)
		}
		if cfg.Distributed() != (tc.mode != ModeObserver) || cfg.Observing() != (tc.mode != ModeDistributed) {
			t.Errorf("%q: distributed %t, observing %t", tc.doc, cfg.Distributed(), cfg.Observing())
		}
		if !cfg.Node.Register {
			t.Errorf("%q: register defaults to false", tc.doc)
		}
	}
	cfg, err := Parse([]byte("[node]\nregister = false\n"), "c.toml")
	if err != nil || cfg.Node.Register {
		t.Fatalf("register = false: %v, %+v", err, cfg.Node)
	}
}

func TestModeProblemsHavePositions(t *testing.T) {
	for _, tc := range []struct {
		doc          string
		line, column int
		key, msg     string
	}{
		{"[node]\nmode = \"observe\"\n", 2, 1, "node.mode", `unknown mode "observe"`},
		{"[node]\nmode = \"distributed\"\n[observer]\nenabled = true\n", 4, 1, "observer.enabled", `conflicts with node.mode = "distributed"`},
		{"[node]\nmode = \"observer\"\n[observer]\nenabled = true\n", 4, 1, "observer.enabled", `conflicts with node.mode = "observer"`},
		{"[node]\nmode = \"observer\"\n[observer]\nchannels = []\n", 4, 1, "observer.channels", `is empty while node.mode = "observer"`},
	} {
		got := problemsOf(t, tc.doc)
		if len(got) != 1 {
			t.Fatalf("%q: %d problems, want 1:\n%s", tc.doc, len(got), (&Error{Problems: got}).Error())
		}
		if g := got[0]; g.Line != tc.line || g.Column != tc.column || g.Key != tc.key || !strings.Contains(g.Message, tc.msg) {
			t.Errorf("%q: problem %+v, want %d:%d %s containing %q", tc.doc, g, tc.line, tc.column, tc.key, tc.msg)
		}
	}
}
