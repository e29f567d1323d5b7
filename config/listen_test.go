package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneListenRule: the console, metrics and MCP over HTTP check their
// listen address with one rule, so the three cannot drift apart.
func TestOneListenRule(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var homes []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "net.SplitHostPort("); n > 0 {
			homes = append(homes, f)
		}
	}
	if len(homes) != 1 || homes[0] != "listen.go" {
		t.Errorf("listen addresses are split in %v; want listen.go only", homes)
	}
	for _, tt := range []struct{ listen, console, metrics, mcp string }{
		{"127.0.0.1:1", "", "", ""},
		{"[::1]:1", "", "", ""},
		{"localhost:1", "", "", ""},
		{":1", "not a loopback", "beyond this machine", "not a loopback"},
		{"example.com:1", "not a loopback", "beyond this machine", "not a loopback"},
		{"127.0.0.1", "not host:port", "not host:port", "not host:port"},
		{"127.0.0.1:99999", "no valid port", "no valid port", "no valid port"},
	} {
		for _, got := range []struct{ got, want string }{
			{ConsoleListenProblem(tt.listen), tt.console},
			{MetricsListenProblem(tt.listen, false), tt.metrics},
			{LoopbackListenProblem(tt.listen), tt.mcp},
		} {
			if (got.want == "") != (got.got == "") || !strings.Contains(got.got, got.want) {
				t.Errorf("%q: got %q, want %q", tt.listen, got.got, got.want)
			}
		}
	}
}
