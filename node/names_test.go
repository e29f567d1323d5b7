package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// startSecondNode runs another node, named name, against h's hub.
func startSecondNode(t *testing.T, h *harness, name string, more func(*config.Config)) {
	t.Helper()
	cfg := h.cfg
	cfg.Hub.Name = name
	if more != nil {
		more(&cfg)
	}
	logs := &testlog.Buffer{}
	n, err := New(cfg, zerolog.New(logs), WithTools(toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())),
		withTimings(testTimings()), WithGetenv(noEnv(t)), WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.11"}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("second node: Run = %v", err)
		}
	})
}

func registeredNames(t *testing.T, h *harness, c *demohub.Conn) map[string]string {
	t.Helper()
	m, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, raw := range m.(wsproto.RegisterTools).Tools {
		var mf struct{ Name string }
		if err := json.Unmarshal(raw, &mf); err != nil {
			t.Fatal(err)
		}
		out[mf.Name] = string(raw)
	}
	return out
}

// Two machines with the same tools and per-node names both serve through
// one server: each registers its own names, and its invocation text names
// its own tool, so the model calls each node's copy by its name.
func TestTwoNodesWithPerNodeNamesBothServe(t *testing.T) {
	t.Parallel()
	names := func(c *config.Config) { c.Node.ToolNames = "{tool}_{node}" }
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		names(c)
		c.Hub.Name = "gpu-a"
		c.Tools = map[string]config.ToolConfig{"NodeInfo": {Name: "Info_A"}}
		c.Node.ExposedTools = append(c.Node.ExposedTools, "NodeInfo")
	}})
	a := h.accept()
	regA := registeredNames(t, h, a)
	startSecondNode(t, h, "gpu-b", func(c *config.Config) { c.Tools = nil })
	b := h.accept()
	regB := registeredNames(t, h, b)

	echoA, echoB := regA["Echo_gpu-a"], regB["Echo_gpu-b"]
	if echoA == "" || echoB == "" || regA["Echo"] != "" || regB["Echo"] != "" {
		t.Fatalf("register_tools: a %v, b %v; want Echo_gpu-a and Echo_gpu-b", keys(regA), keys(regB))
	}
	if !strings.Contains(echoA, "tool_name:「始」Echo_gpu-a「末」") || strings.Contains(echoA, "「始」Echo「末」") ||
		!strings.Contains(echoB, "tool_name:「始」Echo_gpu-b「末」") {
		t.Fatalf("the invocation text names another tool:\na: %s\nb: %s", echoA, echoB)
	}
	if regA["Info_A"] == "" {
		t.Fatalf("[tools.NodeInfo] name not applied: %v", keys(regA))
	}
	for conn, tool := range map[*demohub.Conn]string{a: "Echo_gpu-a", b: "Echo_gpu-b"} {
		res := h.call(conn, tool, map[string]any{"message": "hi " + tool})
		if res.Status != wsproto.StatusSuccess || !strings.Contains(string(res.Result), "hi "+tool) {
			t.Fatalf("call %s = %+v", tool, res)
		}
	}
	// The tool's own name is not one the server was given.
	if res := h.call(a, "Echo", map[string]any{"message": "x"}); res.Status != wsproto.StatusError || !strings.Contains(res.Error, "unknown tool") {
		t.Fatalf("call by the local name = %+v", res)
	}
	var shown string
	for _, ts := range h.node.ToolStatuses().Tools {
		if ts.Name == "Echo" {
			shown = ts.ServerName
		}
	}
	if shown != "Echo_gpu-a" {
		t.Fatalf("tools shows Echo's server name as %q", shown)
	}
}

func TestToolNameCollisionIsAConfigError(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Hub.Key = testKey
	cfg.Tools = map[string]config.ToolConfig{"NodeInfo": {Name: "Echo"}}
	_, err := New(cfg, zerolog.Nop(), WithTools(toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())),
		WithGetenv(noEnv(t)), withTimings(testTimings()))
	if err == nil || !strings.Contains(err.Error(), `would both be registered as "Echo"`) {
		t.Fatalf("New = %v, want the collision refused", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
