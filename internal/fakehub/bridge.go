package fakehub

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/vcpnode/vcpnode/demohub"
)

// ServerPlugins are a server's plugins as its manifests say, for a hub's
// Bridge: one with commands, one async, one excluded by name (VCPLog),
// one by display keyword ([AIO]), one distributed (another node's) and
// one without commands.
func ServerPlugins() []demohub.BridgePlugin {
	cmd := func(name, desc, example string) map[string]any {
		return map[string]any{"commandIdentifier": name, "command": name, "description": desc, "example": example}
	}
	return []demohub.BridgePlugin{
		{Name: "SciCalculator", DisplayName: "科学计算器", Description: "Computes.", Version: "1.2.0",
			InvocationCommands: []map[string]any{cmd("calc", "Evaluate.\nexpression (string, required)",
				"<<<[TOOL_REQUEST]>>>\ntool_name:「始」SciCalculator「末」,\nexpression:「始」1+1「末」\n<<<[END_TOOL_REQUEST]>>>")}},
		{Name: "VideoGen", Description: "Makes videos, later.", InvocationCommands: []map[string]any{cmd("submit", "prompt (string)", "")}},
		{Name: "VCPLog", InvocationCommands: []map[string]any{cmd("x", "", "")}},
		{Name: "AIOTool", DisplayName: "[AIO] chat tool", InvocationCommands: []map[string]any{cmd("x", "", "")}},
		{Name: "RemoteThing", Distributed: true, InvocationCommands: []map[string]any{cmd("x", "", "")}},
		{Name: "NoCommands"},
	}
}

// ServerRuns is what ServerPlugins do, as a demohub.Bridge's Run: SciCalculator
// answers at once (and throws for the expression "boom"), VideoGen starts
// a task and hands its arguments to started (when not nil), anything else
// is not the server's.
func ServerRuns(started chan<- map[string]json.RawMessage) func(context.Context, string, map[string]json.RawMessage) (any, error) {
	return func(ctx context.Context, tool string, args map[string]json.RawMessage) (any, error) {
		switch tool {
		case "SciCalculator":
			var expr string
			_ = json.Unmarshal(args["expression"], &expr)
			if expr == "boom" {
				return nil, errors.New(`{"plugin_error":"division by zero in boom"}`)
			}
			return map[string]any{"content": []map[string]any{{"type": "text", "text": "= 2 (" + expr + ")"}}}, nil
		case "VideoGen":
			if started != nil {
				started <- args
			}
			return map[string]any{"status": "success", "taskId": "task-77", "message": "submitted"}, nil
		}
		return nil, errors.New("no such plugin")
	}
}
