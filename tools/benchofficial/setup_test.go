package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// vcpnode keeps interpreters waiting only for the warm rows that run, so a
// run limited by -only measures the node's own memory; the config it gets
// is one vcpnode accepts.
func TestVcpnodeConfigWarmsOnlyTheRowsThatRun(t *testing.T) {
	for _, tc := range []struct {
		only string
		warm []string
	}{
		{"", []string{"BenchPyWarm", "BenchPyPreload", "BenchJsWarm"}},
		{"Python", []string{"BenchPyWarm", "BenchPyPreload"}},
		{"Node.js", []string{"BenchJsWarm"}},
		{"10 MiB", nil},
	} {
		dir := t.TempDir()
		w := workdir{files: dir, plugins: dir, vcpnodeConfig: filepath.Join(dir, "vcpnode.toml")}
		if err := writeVcpnodeConfig(w, options{only: tc.only}); err != nil {
			t.Fatal(err)
		}
		if err := setHubPort(w.vcpnodeConfig, 1234); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(w.vcpnodeConfig)
		if err != nil {
			data, _ := os.ReadFile(w.vcpnodeConfig)
			t.Fatalf("-only %q: vcpnode refuses the config: %v\n%s", tc.only, err, data)
		}
		var got []string
		for _, name := range []string{"BenchPyWarm", "BenchPyPreload", "BenchJsWarm"} {
			if tool, ok := cfg.Tools[name]; ok && tool.Warm != nil && *tool.Warm {
				got = append(got, name)
			}
		}
		if len(got) != len(tc.warm) {
			t.Fatalf("-only %q: warm %v, want %v", tc.only, got, tc.warm)
		}
		for i := range got {
			if got[i] != tc.warm[i] {
				t.Fatalf("-only %q: warm %v, want %v", tc.only, got, tc.warm)
			}
		}
	}
}
