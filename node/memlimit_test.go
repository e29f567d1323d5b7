package node

import (
	"runtime/debug"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

func TestMemoryLimitFollowsTheConfig(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.MemoryLimit = 48 << 20 }})
	if got := debug.SetMemoryLimit(-1); got != 48<<20 {
		t.Fatalf("memory limit after New = %d, want %d", got, 48<<20)
	}
	cfg := h.cfg
	cfg.Node.MemoryLimit = 0
	if _, err := h.node.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit after a reload without one = %d, want the runtime's own %d", got, before)
	}
}
