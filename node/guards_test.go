package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A result above max_result_bytes reaches the server cut, not refused
// (oversize = "truncate", the default): the head of its text on a
// character boundary and a note saying what was left out and how to ask
// for less, all within the cap. With oversize = "error" it is an error.
func TestOversizeResultTruncatedThroughTheHub(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.MaxResultBytes = 4 * config.KiB }})
	c := h.accept()
	big := strings.Repeat("héllo wörld ", 2000)
	res := h.call(c, "Echo", map[string]any{"message": big})
	if res.Status != wsproto.StatusSuccess || len(res.Result) > 4*config.KiB {
		t.Fatalf("status %s, %d bytes: %.300s", res.Status, len(res.Result), res.Error)
	}
	var r struct {
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(res.Result, &r); err != nil || len(r.Content) != 2 {
		t.Fatalf("%v: %.500s", err, res.Result)
	}
	head, note := r.Content[0].Text, r.Content[1].Text
	if !utf8.ValidString(head) || !strings.Contains(head, "héllo wörld héllo") || len(head) < 3*config.KiB {
		t.Errorf("head (%d bytes): %.200s", len(head), head)
	}
	if !strings.HasPrefix(note, "[result of Echo truncated: ") || !strings.Contains(note, "max_result_bytes (4096)") {
		t.Errorf("note: %s", note)
	}

	h2 := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.MaxResultBytes, c.Node.Oversize = 4*config.KiB, "error" }})
	res = h2.call(h2.accept(), "Echo", map[string]any{"message": big})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "exceeds max_result_bytes (4096)") {
		t.Errorf("oversize error: %s %.200s", res.Status, res.Error)
	}
}

// The loop guard through the hub: past [node] repeat_limit calls of one
// tool with the same arguments, the next is answered with an error that
// tells the model it is repeating itself, and counted in the metrics as
// outcome "repeated"; other arguments still run.
func TestLoopGuardThroughTheHub(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.RepeatLimit = 2 }})
	conn := h.accept()
	srv := startMetrics(t, h)
	for range 2 {
		if res := h.call(conn, "Echo", map[string]any{"message": "again"}); res.Status != wsproto.StatusSuccess {
			t.Fatalf("call within the limit: %+v", res)
		}
	}
	res := h.call(conn, "Echo", map[string]any{"message": "again"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "Echo was already called with these same arguments 2 times in the last 1m") ||
		!strings.Contains(res.Error, "You are repeating yourself") {
		t.Errorf("the repeated call: %+v", res)
	}
	if res := h.call(conn, "Echo", map[string]any{"message": "something else"}); res.Status != wsproto.StatusSuccess {
		t.Errorf("other arguments: %+v", res)
	}
	m := scrape(t, h.ctx, srv.Addr())
	if v, ok := metricValue(m, "vcpnode_calls_total", map[string]string{"tool": "Echo", "outcome": "repeated"}); !ok || v != 1 {
		t.Errorf("repeated calls counted: %v %v", v, ok)
	}
}

// A VCP block's request_id reaches the node as an argument (the server's
// parser passes every field on): it is the request's id, so no tool gets
// it — a typed tool would refuse it as an unknown argument.
func TestRequestIDIsNotAnArgument(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Files.Roots = []string{root}
		c.Node.ExposedTools = append(c.Node.ExposedTools, "ReadFile")
	}})
	conn := h.accept()
	res := h.call(conn, "ReadFile", map[string]any{"path": filepath.Join(root, "a.txt"), "request_id": "req-42"})
	if res.Status != wsproto.StatusSuccess || !strings.Contains(string(res.Result), "one") {
		t.Errorf("ReadFile with request_id: %+v", res)
	}
	res = h.call(conn, "Echo", map[string]any{"message": "hi", "request_id": "req-43"})
	if res.Status != wsproto.StatusSuccess || strings.Contains(string(res.Result), "req-43") || !strings.Contains(string(res.Result), "hi") {
		t.Errorf("Echo with request_id: %s %s", res.Status, res.Result)
	}
}

// filesLikeTool has two commands, as a multi-command plugin has.
type filesLikeTool struct{}

func (filesLikeTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Disk", Description: "reads and deletes", DistributedExposed: true, Source: "test",
		Commands: []toolhost.Command{{Command: "Read", Description: "reads"}, {Command: "Delete", Description: "deletes"}}}
}

func (filesLikeTool) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	return "ran " + string(c.Args["command"]), nil
}

// [tools.X.commands.Y] expose = false: the command leaves register_tools,
// the prompt formats and the MCP tool list, and a call of it through the
// hub or an MCP client is answered like an unknown command; the tool's
// other command is offered and runs.
func TestHiddenCommand(t *testing.T) {
	no := false
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{filesLikeTool{}}, config: func(c *config.Config) {
		c.Node.ExposedTools = append(c.Node.ExposedTools, "Disk")
		c.Tools = map[string]config.ToolConfig{"Disk": {Commands: map[string]config.ToolCommandConfig{"Delete": {Expose: &no}}}}
	}})
	conn := h.accept()
	m, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := json.Marshal(m)
	if !strings.Contains(string(reg), `"Read"`) || strings.Contains(string(reg), "Delete") {
		t.Errorf("register_tools: %s", reg)
	}
	if res := h.call(conn, "Disk", map[string]any{"command": "Read"}); res.Status != wsproto.StatusSuccess {
		t.Errorf("the offered command: %+v", res)
	}
	res := h.call(conn, "Disk", map[string]any{"command": "Delete"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, `unknown command "Delete": the commands are "Read"`) {
		t.Errorf("the hidden command: %+v", res)
	}
	for _, format := range []string{"openai", "json", "vcp-definition", "vcp"} {
		p, err := h.node.Prompt(format)
		if err != nil || !strings.Contains(p.Text, "Disk") || strings.Contains(p.Text, "Delete") {
			t.Errorf("prompt %s (%v):\n%s", format, err, p.Text)
		}
	}
	tools, _ := json.Marshal(h.node.MCPTools())
	if !strings.Contains(string(tools), "Disk") || strings.Contains(string(tools), "Delete") {
		t.Errorf("MCP tools: %s", tools)
	}
	o := h.node.callMCP(h.ctx, "m-1", "Disk", map[string]json.RawMessage{"command": json.RawMessage(`"Delete"`)})
	if o.OK() || !strings.Contains(o.Err, `unknown command "Delete"`) {
		t.Errorf("MCP call of the hidden command: %+v", o)
	}
}
