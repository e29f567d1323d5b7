package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// A server starting with a longer budget than usual (a package runner's
// first start) says so on its status line.
func TestMCPServerLineStartBudget(t *testing.T) {
	now := time.Now()
	m := controlapi.MCPServerStatus{Name: "files", Transport: "stdio", State: "starting", Since: now.Add(-time.Minute),
		StartBudget: "up to 5m (a first start through npx, which may be downloading the package)"}
	got := mcpServerLine(m, now)
	if want := "starting for 1m (stdio), up to 5m (a first start through npx, which may be downloading the package)"; !strings.HasPrefix(got, want) {
		t.Errorf("line %q\nwant %q", got, want)
	}
}
