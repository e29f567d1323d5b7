package demohub

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/gorilla/websocket"
)

// TestBridgeResultsAsTheServerShapesThem: the server's PluginManager
// reshapes a plugin's answer before its bridge sends it, as a real
// VCPToolBox server (3c070506) did in a manual run.
func TestBridgeResultsAsTheServerShapesThem(t *testing.T) {
	answers := map[string]any{
		"Text":    "当前没有日程。",
		"Wrapped": map[string]any{"status": "success", "result": map[string]any{"content": "inner"}},
		"Failed":  map[string]any{"status": "error", "error": "ProbeSlow failed on purpose: bad"},
		"Bare":    map[string]any{"status": "error"},
		"Task":    map[string]any{"content": "accepted", "taskId": "probe-1"},
		"List":    []any{"a", 1},
	}
	var plugins []BridgePlugin
	for name := range answers {
		plugins = append(plugins, BridgePlugin{Name: name, InvocationCommands: []map[string]any{{"commandIdentifier": "X"}}})
	}
	h := startHub(t, Options{Bridge: &Bridge{Plugins: plugins,
		Run: func(_ context.Context, tool string, _ map[string]json.RawMessage) (any, error) {
			return answers[tool], nil
		}}})
	ws, _ := dialNode(t, h)
	call := func(tool, args string) map[string]any {
		t.Helper()
		frame := `{"type":"execute_vcp_tool","data":{"requestId":"r-` + tool + `","toolName":"` + tool + `","toolArgs":` + args + `}}`
		if err := ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		for {
			_, data := readFrame(t, ws)
			var f struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			if f.Type == "vcp_tool_result" {
				return f.Data
			}
		}
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$`)
	check := func(d map[string]any, wantResult map[string]any) {
		t.Helper()
		res, _ := d["result"].(map[string]any)
		if d["status"] != "success" || res == nil || !stamp.MatchString(res["timestamp"].(string)) {
			t.Fatalf("frame data = %v, want a success with a server timestamp", d)
		}
		delete(res, "timestamp")
		got, _ := json.Marshal(res)
		want, _ := json.Marshal(wantResult)
		if string(got) != string(want) {
			t.Fatalf("result = %s, want %s", got, want)
		}
	}
	check(call("Text", `{}`), map[string]any{"original_plugin_output": "当前没有日程。"})
	check(call("Wrapped", `{"maid":"Nova"}`), map[string]any{"content": "inner", "MaidName": "Nova"})
	check(call("Task", `{}`), map[string]any{"content": "accepted", "taskId": "probe-1"})
	if d := call("List", `{}`); d["status"] != "success" || fmt.Sprint(d["result"]) != "[a 1]" {
		t.Fatalf("List = %v, want the array as it was", d)
	}
	if d := call("Failed", `{}`); d["status"] != "error" || d["error"] != "ProbeSlow failed on purpose: bad" {
		t.Fatalf("Failed = %v, want the plugin's error text", d)
	}
	if d := call("Bare", `{}`); d["status"] != "error" || d["error"] != `Plugin "Bare" reported an unspecified error.` {
		t.Fatalf("Bare = %v, want the server's default text", d)
	}
	// The task is the connection's: its late result reaches it.
	if err := h.BridgeCallback(testContext(t), "probe-1", map[string]any{"done": true}); err != nil {
		t.Fatalf("BridgeCallback: %v", err)
	}
}
