package node

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/controltest"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

// startControl serves the control API of h's node and returns a client.
func startControl(t *testing.T, h *harness, configFile string) (*control.Server, *controlapi.ControlClient) {
	t.Helper()
	srv, err := control.Listen(h.ctx, h.node, control.Options{
		Socket: testnet.SocketPath(t), ConfigFile: configFile, Version: "1.2.3-test", MetricsAddr: "127.0.0.1:9464", Log: h.node.log,
	})
	if err != nil {
		t.Fatalf("ListenControl: %v", err)
	}
	return srv, controltest.Connect(t, srv)
}

// asyncCall sends an execute_tool from the hub and delivers its result later.
func asyncCall(h *harness, c interface {
	CallExecute(context.Context, wsproto.ExecuteTool) (wsproto.ToolResult, error)
}, id, tool string, args map[string]string) <-chan wsproto.ToolResult {
	out := make(chan wsproto.ToolResult, 1)
	call := wsproto.ExecuteTool{RequestID: id, ToolName: tool, ToolArgs: map[string]json.RawMessage{}}
	for k, v := range args {
		call.ToolArgs[k] = jsonString(v)
	}
	go func() {
		res, err := c.CallExecute(h.ctx, call)
		if err != nil {
			res = wsproto.ToolResult{RequestID: id, Status: "test-error", Error: err.Error()}
		}
		out <- res
	}()
	return out
}

func waitResult(h *harness, ch <-chan wsproto.ToolResult) wsproto.ToolResult {
	h.t.Helper()
	select {
	case res := <-ch:
		return res
	case <-h.ctx.Done():
		h.t.Fatal("no tool_result")
		return wsproto.ToolResult{}
	}
}

// waitPending waits until the node holds n calls for approval.
func (h *harness) waitPending(n int) []toolhost.PendingApproval {
	h.t.Helper()
	return testtool.WaitPending(h.ctx, h.t, h.node.Approvals(), n)
}

func TestControlStatus(t *testing.T) {
	gate := newGateTool()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}})
	conn := h.accept()
	h.waitState("serverId", func(s ConnState) bool { return s.ServerID != "" })
	_, client := startControl(t, h, "/etc/vcpnode/config.toml")

	pending := asyncCall(h, conn, "g-1", "Gate", nil)
	h.waitStarted(gate, "g-1")
	st, err := client.Status(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var exposed, hidden int
	for _, ti := range h.node.Tools() {
		if ti.Spec.Implicit {
			continue // internal_request_file: never registered, not counted
		}
		if ti.Exposure.Exposed {
			exposed++
		} else {
			hidden++
		}
	}
	c := st.Connection
	switch {
	case c.Phase != PhaseConnected || c.ServerID != conn.ServerID() || c.Sessions != 1 || c.Reconnects != 0 || !c.RetryAt.IsZero():
		t.Errorf("connection = %+v", c)
	case st.HubURL != h.node.HubURL() || strings.Contains(st.HubURL, testKey):
		t.Errorf("hub url %q", st.HubURL)
	case st.Version != "1.2.3-test" || st.PID != os.Getpid() || st.Name != "test-node" || st.ConfigFile != "/etc/vcpnode/config.toml":
		t.Errorf("identity = %+v", st)
	case st.Tools != controlapi.ToolCounts{Registered: exposed + hidden, Exposed: exposed, Hidden: hidden} || exposed == 0 || hidden == 0:
		t.Errorf("tools = %+v, want %d exposed and %d hidden", st.Tools, exposed, hidden)
	case len(st.InFlight) != 1 || st.InFlight[0].RequestID != "g-1" || st.InFlight[0].Tool != "Gate" || st.InFlight[0].State != controlapi.CallRunning:
		t.Errorf("in flight = %+v", st.InFlight)
	case st.StartedAt.After(st.Now) || st.Now.Sub(st.StartedAt) > time.Minute || st.Metrics != "127.0.0.1:9464":
		t.Errorf("times = %v, %v; metrics %q", st.StartedAt, st.Now, st.Metrics)
	}
	close(gate.Release)
	if res := waitResult(h, pending); res.Status != wsproto.StatusSuccess {
		t.Fatalf("gate call: %+v", res)
	}
}

func TestControlStatusWhileBackingOff(t *testing.T) {
	h := startHarness(t, harnessOpt{timings: func(tm *timings) { tm.Retry = hourRetries() }})
	first := h.accept()
	h.waitState("connected", func(s ConnState) bool { return s.Phase == PhaseConnected })
	_, client := startControl(t, h, "")
	if rep, err := client.Reconnect(h.ctx); err != nil || rep.Reconnecting || rep.Phase != PhaseConnected {
		t.Fatalf("reconnect while connected = %+v, %v", rep, err)
	}
	h.hub.Stop(h.ctx)
	<-first.Done()
	h.waitState("backoff", func(s ConnState) bool { return s.Phase == PhaseBackoff })
	st, err := client.Status(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Connection
	if c.RetryAt.IsZero() || time.Until(c.RetryAt) < 10*time.Minute || c.Attempt != 1 || c.LastError == "" {
		t.Fatalf("backoff status = %+v", c)
	}
	if err := h.hub.Resume(); err != nil {
		t.Fatal(err)
	}
	// Without the request the node would wait most of an hour.
	rep, err := client.Reconnect(h.ctx)
	if err != nil || !rep.Reconnecting || rep.Phase != PhaseBackoff {
		t.Fatalf("reconnect = %+v, %v", rep, err)
	}
	h.accept()
	s := h.waitState("connected again", func(s ConnState) bool { return s.Phase == PhaseConnected })
	if s.Sessions != 2 {
		t.Errorf("sessions = %d", s.Sessions)
	}
	if st, _ := client.Status(h.ctx); st.Connection.Reconnects != 1 {
		t.Errorf("reconnects = %d", st.Connection.Reconnects)
	}
}

func TestControlTools(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask", Timeout: config.Duration(5 * time.Minute), MaxConcurrent: 2}}
	}})
	_, client := startControl(t, h, "")
	tools, err := client.Tools(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]controlapi.ToolStatus{}
	for _, ts := range tools {
		byName[ts.Name] = ts
	}
	echo, info := byName["Echo"], byName["NodeInfo"]
	if !echo.Exposed || echo.Approval != "ask" || echo.ApprovalTimeoutMs != 120000 || echo.TimeoutMs != 300000 ||
		echo.MaxConcurrent != 2 || echo.Source != "builtin" || echo.Reason == "" {
		t.Errorf("Echo = %+v", echo)
	}
	if info.Exposed || info.Approval != "auto" || info.ApprovalTimeoutMs != 0 || !strings.Contains(info.Reason, "built-in") {
		t.Errorf("NodeInfo = %+v", info)
	}
	if file := byName[files.ToolName]; !file.Implicit {
		t.Errorf("%s = %+v, want implicit", files.ToolName, file)
	}
}

func TestControlCall(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "deny"}}
	}})
	_, client := startControl(t, h, "")
	tests := []struct {
		name    string
		req     controlapi.CallRequest
		ok      bool
		outcome string
		want    string // in the result or the error
		status  int    // an API error instead of a call
	}{
		{"tool result", controlapi.CallRequest{Tool: "Echo", Args: stringArgs("message", "hello there")}, true, "ok", "hello there", 0},
		{"tool error", controlapi.CallRequest{Tool: "Echo", Args: stringArgs("fail", "boom")}, false, "error", "boom", 0},
		{"hidden tool, no args", controlapi.CallRequest{Tool: "NodeInfo"}, true, "ok", `"goVersion"`, 0},
		{"unknown tool", controlapi.CallRequest{Tool: "Nope"}, false, "", `unknown tool "Nope"`, http.StatusNotFound},
		{"no tool", controlapi.CallRequest{}, false, "", "no tool named", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := client.Call(h.ctx, tt.req)
			if tt.status != 0 {
				var api *controlapi.APIError
				if !errors.As(err, &api) || api.Status != tt.status || !strings.Contains(api.Message, tt.want) {
					t.Fatalf("Call = %+v, %v; want HTTP %d %q", res, err, tt.status, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			text := string(res.Result) + res.Error
			if res.OK != tt.ok || res.Outcome != tt.outcome || !strings.Contains(text, tt.want) ||
				!strings.HasPrefix(res.RequestID, "local-") || res.Tool != tt.req.Tool {
				t.Errorf("Call = %+v", res)
			}
		})
	}
	// Echo is refused to the server but the owner may still run it.
	h.waitLog(`"approval":"local"`)
}

// stringArgs makes tool arguments of string values, as the server sends them.
func stringArgs(kv ...string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = jsonString(kv[i+1])
	}
	return out
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
