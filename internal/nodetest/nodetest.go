// Package nodetest runs a whole node for the tests of the packages it
// composes (the console's pages, the observer channels, the control
// socket): a node on a state directory of the test's own against a fake
// hub on loopback, its control socket, console and metrics listeners, and
// waits with deadlines. It builds on node's exported API only; node's own
// tests keep their harness, which reaches inside. Only _test files import
// it (internal/archtest checks).
package nodetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/hubtest"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Options change the node a Harness runs.
type Options struct {
	// Hub is the fake hub's behaviour (its Key is always fakehub.TestKey).
	Hub demohub.Options
	// Config changes the node's config after fakehub.StartForNode's.
	Config func(*config.Config)
	// Session changes SessionTimings before the node gets them.
	Session func(*hubsession.Timings)
	// ServerListWait bounds the wait for the server's tool list (zero: the
	// bridge's default).
	ServerListWait time.Duration
	// Tools are added to Echo and SystemInfo.
	Tools []toolhost.Tool
	// Patience bounds each wait of the test on its own (hubtest.Rig.Wait);
	// 0 means 30 s.
	Patience time.Duration
}

// Harness is a node running against a fake hub on loopback until the test
// ends (the Rig's Hub, Config, Logs, Log and Ctx are its); the test fails
// if the node's Run does not end cleanly or the key reaches its log.
type Harness struct {
	*hubtest.Rig
	Node *node.Node

	t *testing.T
}

// SessionTimings are the hub session's production behaviour at test speed:
// retries within 50 ms, no connection rate limit, no re-registration.
func SessionTimings() hubsession.Timings {
	t := hubsession.DefaultTimings()
	t.Retry = hubtest.FastRetry()
	t.ConnsPerMinute = 0
	t.Reregister = nil
	return t
}

// Start runs a node named "test-node" with Echo and Gate exposed (see
// fakehub.StartForNode) and o's changes. The node sees no environment
// but a state directory of the test's own, and stops when the test ends.
func Start(t *testing.T, o Options) *Harness {
	t.Helper()
	rig := hubtest.Start(t, hubtest.Options{Hub: o.Hub, Config: o.Config, Patience: o.Patience})
	tm := SessionTimings()
	if o.Session != nil {
		o.Session(&tm)
	}
	tools := append([]toolhost.Tool{toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(time.Now())}, o.Tools...)
	n, err := node.New(rig.Config, rig.Log, node.WithTools(tools...), node.WithSessionTimings(tm), node.WithServerListWait(o.ServerListWait),
		node.WithGetenv(fakehub.NoEnv(t)), node.WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }))
	if err != nil {
		t.Fatalf("node.New: %v", err)
	}
	rig.Run("Run", n.Run)
	return &Harness{Rig: rig, Node: n, t: t}
}

// AsyncCall sends an execute_tool with id from the hub and delivers its
// result later; args' values are sent as JSON strings, as the server does.
func (h *Harness) AsyncCall(c *demohub.Conn, id, tool string, args map[string]string) <-chan wsproto.ToolResult {
	out := make(chan wsproto.ToolResult, 1)
	call := wsproto.ExecuteTool{RequestID: id, ToolName: tool, ToolArgs: map[string]json.RawMessage{}}
	for k, v := range args {
		raw, _ := json.Marshal(v) // a string always marshals
		call.ToolArgs[k] = raw
	}
	go func() {
		res, err := c.CallExecute(h.Ctx, call)
		if err != nil {
			res = wsproto.ToolResult{RequestID: id, Status: "test-error", Error: err.Error()}
		}
		out <- res
	}()
	return out
}

// WaitResult waits for the result of an AsyncCall.
func (h *Harness) WaitResult(ch <-chan wsproto.ToolResult) wsproto.ToolResult {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	select {
	case res := <-ch:
		return res
	case <-ctx.Done():
		h.t.Fatal("no tool_result")
		return wsproto.ToolResult{}
	}
}

// Registered waits for c's next register_tools: the names, sorted, and
// each manifest by name.
func (h *Harness) Registered(c *demohub.Conn) (names []string, manifests map[string]map[string]any) {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	names, manifests, err := fakehub.Registered(ctx, c)
	if err != nil {
		h.t.Fatal(err)
	}
	return names, manifests
}

// WaitGone waits for the node to drop c (a reload that changed the tools).
func (h *Harness) WaitGone(c *demohub.Conn) {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	select {
	case <-c.Done():
	case <-ctx.Done():
		h.t.Fatal("the node kept its connection")
	}
}

// WaitState waits (by change notification) until the node's connection
// state satisfies ok.
func (h *Harness) WaitState(what string, ok func(node.ConnState) bool) node.ConnState {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	return testwait.Change(ctx, h.t, what, h.Node.State, ok)
}

// WaitPending waits until the node holds n calls for approval.
func (h *Harness) WaitPending(n int) []toolhost.PendingApproval {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	return testtool.WaitPending(ctx, h.t, h.Node.Approvals(), n)
}

// WaitServerState waits until the server's tools reach want. The bridge
// has no change channel: this polls, for the harness's patience.
func (h *Harness) WaitServerState(want bridge.State) {
	h.t.Helper()
	ctx, cancel := h.Wait()
	defer cancel()
	if !testwait.Poll(ctx, func() bool { return h.Node.ServerTools(h.Ctx, false).State == string(want) }) {
		h.t.Fatalf("server tools never reached %q: %+v", want, h.Node.ServerTools(h.Ctx, false))
	}
}
