package node

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// The fake hub answering as a real VCPToolBox server (3c070506) did in a
// manual run: its manifests mostly name commands only by commandIdentifier,
// and its bridge never forwards an asynchronous plugin's final result.

func TestServerToolsCommandsNamedByCommandIdentifier(t *testing.T) {
	t.Parallel()
	plugins := []demohub.BridgePlugin{
		{Name: "ScheduleManager", DisplayName: "用户日程管理器", Version: "1.0.0", InvocationCommands: []map[string]any{
			{"commandIdentifier": "AddSchedule", "description": "添加一个新的日程。"},
			{"commandIdentifier": "ListSchedules", "description": "查看所有日程。",
				"example": "<<<[TOOL_REQUEST]>>>\ntool_name:「始」ScheduleManager「末」,\ncommand:「始」ListSchedules「末」\n<<<[END_TOOL_REQUEST]>>>"},
		}},
		{Name: "DailyNote", InvocationCommands: []map[string]any{
			{"commandIdentifier": "create", "description": "c", "parameters": []any{map[string]any{"name": "x"}}},
		}},
	}
	h := bridgeHarness(t, &demohub.Bridge{Plugins: plugins}, nil)
	h.accept()
	h.waitServerState(bridge.StateOffered)
	got := h.node.ServerTools(h.ctx, false)
	var cmds []string
	for _, st := range got.Tools {
		for _, c := range st.Commands {
			cmds = append(cmds, st.Name+"."+c.Command)
		}
	}
	if want := "DailyNote.create,ScheduleManager.AddSchedule,ScheduleManager.ListSchedules"; strings.Join(cmds, ",") != want {
		t.Fatalf("commands = %v, want %s", cmds, want)
	}
}

func TestServerToolAsyncFinalResultNeverForwarded(t *testing.T) {
	t.Parallel()
	h := bridgeHarness(t, &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(nil)}, nil)
	h.accept()
	h.waitServerState(bridge.StateOffered)

	accepted := make(chan bridge.Progress, 1)
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := h.node.bridge.Call(ctx, "VideoGen", map[string]json.RawMessage{"prompt": json.RawMessage(`"sunset"`)},
			func(p bridge.Progress) { accepted <- p })
		done <- err
	}()
	select {
	case p := <-accepted:
		if p.Kind != "accepted" || p.TaskID != "task-77" {
			t.Fatalf("progress = %+v, want the accepted task", p)
		}
	case <-h.ctx.Done():
		t.Fatal("the server never accepted the task")
	}
	// As the real server: no vcp_tool_result for the task, ever. The call
	// ends with its deadline, and says the task was accepted.
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, bridge.ErrNoFinalResult) || !strings.Contains(err.Error(), "task-77") || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want ErrNoFinalResult naming task-77", err)
		}
	case <-h.ctx.Done():
		t.Fatal("the call did not end with its context")
	}
}

// Through the dispatcher (the daemon's calls: `vcpnode server call`, MCP,
// the console), the node's timeout message keeps the bridge's explanation.
func TestServerToolAsyncTimeoutSaysTheTaskWasAccepted(t *testing.T) {
	t.Parallel()
	h := bridgeHarness(t, &demohub.Bridge{Plugins: fakehub.ServerPlugins(), Run: fakehub.ServerRuns(nil)}, func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"vcp_VideoGen": {Timeout: config.Duration(time.Second)}}
	})
	h.accept()
	h.waitServerState(bridge.StateOffered)
	testwait.Poll(h.ctx, func() bool { return h.hasTool("vcp_VideoGen") })
	o := h.node.CallLocal(h.ctx, "r1", "vcp_VideoGen", map[string]json.RawMessage{"prompt": json.RawMessage(`"sunset"`)})
	if o.OK() || !strings.Contains(o.Err, "timed out") || !strings.Contains(o.Err, "accepted the task") || !strings.Contains(o.Err, "task-77") {
		t.Fatalf("call = %+v, want a timeout that says the server accepted task-77", o)
	}
}
