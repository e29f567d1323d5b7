package node

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// countingSource counts the passes over it (Prepare) and its commits.
type countingSource struct {
	mu                sync.Mutex
	prepares, commits int
}

func (s *countingSource) Prepare(config.Config, toolsource.Env) (toolsource.Prepared, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepares++
	return countingPart{s}, nil
}

func (*countingSource) Tools() []toolhost.Tool            { return nil }
func (*countingSource) Status(*controlapi.StatusResponse) {}
func (*countingSource) Close(context.Context) error       { return nil }

func (s *countingSource) counts() [2]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [2]int{s.prepares, s.commits}
}

type countingPart struct{ s *countingSource }

func (countingPart) Specs() []toolhost.Spec { return nil }
func (countingPart) Discard()               {}

func (p countingPart) Commit(func(string) bool) []string {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.commits++
	return nil
}

// runCounted runs a node on cfg with other as one more tool source until
// the test ends (its log shown if the test failed), and waits for its
// first connection to hub.
func runCounted(ctx context.Context, t *testing.T, hub *demohub.Hub, cfg config.Config, tm timings, other *countingSource) *Node {
	t.Helper()
	logs := &testlog.Buffer{}
	n, err := New(cfg, zerolog.New(logs), WithToolSource(other), withTimings(tm), WithGetenv(noEnv(t)),
		WithLocalIPs(func() ([]string, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- n.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-stopped; err != nil {
			t.Errorf("Run = %v", err)
		}
		if t.Failed() {
			t.Logf("node log:\n%s", logs.String())
		}
	})
	if _, err := hub.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	return n
}

// A new list from the server commits the server tools' source alone: the
// new tool is registered, and no other source is prepared or committed
// again (no plugin rescan, no MCP pass). A rescan still goes over every
// source.
func TestServerListCommitsItsSourceAlone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hub, cfg := fakehub.StartForNode(t, demohub.Options{Bridge: &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(nil)}})
	cfg.Plugins.Dirs, cfg.Plugins.StateDir = []string{t.TempDir()}, t.TempDir()
	tm := testTimings()
	tm.bridgeListWait = 300 * time.Millisecond
	other := &countingSource{}
	n := runCounted(ctx, t, hub, cfg, tm, other)
	has := func(name string) bool {
		for _, ti := range n.Tools() {
			if ti.Spec.Name == name {
				return true
			}
		}
		return false
	}
	if !testwait.Poll(ctx, func() bool { return n.bridge.Status().State == bridge.StateOffered && has("vcp_SciCalculator") }) {
		t.Fatalf("the server's first list was never registered: %+v", n.bridge.Status())
	}
	before := other.counts()
	if before != [2]int{1, 1} {
		t.Errorf("the first list: the other source prepared and committed %v times, want only New's pass [1 1]", before)
	}

	hub.SetBridgePlugins(append(fakehub.ServerPlugins(), demohub.BridgePlugin{Name: "Weather",
		InvocationCommands: []map[string]any{{"command": "now", "description": "The weather now."}}}))
	if got := n.ServerTools(ctx, true); got.Error != "" {
		t.Fatalf("refresh: %s", got.Error)
	}
	if !testwait.Poll(ctx, func() bool { return has("vcp_Weather") }) {
		t.Fatal("the server's new tool was never registered")
	}
	if got := other.counts(); got != before {
		t.Errorf("a new server list prepared and committed the other source: %v, was %v", got, before)
	}

	if _, err := n.Rescan(); err != nil {
		t.Fatal(err)
	}
	if got := other.counts(); got != [2]int{before[0] + 1, before[1] + 1} {
		t.Errorf("a rescan: the other source at %v, was %v; want one more pass", got, before)
	}
	if !has("vcp_Weather") || !has("vcp_SciCalculator") {
		t.Error("a rescan lost the server's tools")
	}
}
