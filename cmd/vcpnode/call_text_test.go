package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestCallTextResults prints the results of a reply's calls as the model
// reads them back: VCP <<<[TOOL_RESULT]>>> blocks and the XML format's
// tool_result event, in the order of the calls, failures included.
func TestCallTextResults(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	d.accept()
	file := writeFile(t, "reply.txt", sampleReply, 0o600)

	code, out, errOut := d.ctl("call", "--text", file, "--results", "vcp")
	if code != exitError {
		t.Fatalf("exit %d, want 1 (one call fails)\n%s\n%s", code, out, errOut)
	}
	// Every call gets an id (none of these carried one) that its result names.
	generatedID := regexp.MustCompile(`(?m)^request_id:「始」call_[A-Z2-7]{24}「末」\n`)
	if n := len(generatedID.FindAllString(out, -1)); n != 3 {
		t.Errorf("want 3 generated request ids, got %d:\n%s", n, out)
	}
	out = generatedID.ReplaceAllString(out, "")
	blocks := strings.Split(strings.TrimSuffix(out, "\n"), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("want 3 result blocks:\n%s", out)
	}
	want := []string{
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」Thumb「末」\nstatus:「始」success「末」\n" +
			`content:「始」{"args":{"crop":false,"format":"png","maid":"Nova","path":"cat.png","size":128}}「末」` + "\n<<<[END_TOOL_RESULT]>>>",
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」Echo「末」\nstatus:「始」success「末」\ncontent:「始」",
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」Thumb「末」\nstatus:「始」error「末」\ncontent:「始ESCAPE」invalid arguments for Thumb:\n",
	}
	for i, w := range want {
		if !strings.HasPrefix(blocks[i], w) || !strings.HasSuffix(blocks[i], "<<<[END_TOOL_RESULT]>>>") {
			t.Errorf("block %d:\n%s\nwant it to start with:\n%s", i+1, blocks[i], w)
		}
	}
	if !strings.Contains(blocks[1], "message: hi & bye") || !strings.Contains(blocks[2], "「末ESCAPE」\n<<<[END_TOOL_RESULT]>>>") {
		t.Errorf("blocks:\n%s", out)
	}

	code, out, errOut = d.ctl("call", "--text", file, "--results", "xml")
	if code != exitError {
		t.Fatalf("xml: exit %d\n%s\n%s", code, out, errOut)
	}
	var ev struct {
		Type      string
		Timestamp string
		Data      struct {
			Results []struct {
				ToolName string `json:"tool_name"`
				Success  bool
				Result   json.RawMessage
				Error    string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("xml results are not one JSON event: %v\n%s", err, out)
	}
	r := ev.Data.Results
	if ev.Type != "tool_result" || len(ev.Timestamp) != len("2024-01-01T12:00:00") || len(r) != 3 ||
		r[0].ToolName != "Thumb" || !r[0].Success || !strings.Contains(string(r[0].Result), `"size": 128`) ||
		r[1].ToolName != "Echo" || !r[1].Success ||
		r[2].ToolName != "Thumb" || r[2].Success || !strings.Contains(r[2].Error, "is not an integer") || r[2].Result != nil {
		t.Errorf("event: %s", out)
	}

	code, out, _ = d.ctl("call", "--text", file, "--results", "json")
	var results []TextCallResult
	if err := json.Unmarshal([]byte(out), &results); code != exitError || err != nil || len(results) != 3 || results[2].Response.OK {
		t.Errorf("json: exit %d %v\n%s", code, err, out)
	}

	for _, bad := range [][]string{
		{"call", "--text", file, "--results", "yaml"},
		{"call", "--text", file, "--results", "vcp", "--json"},
		{"call", "Echo", "--parallel"},
		{"call", "Echo", "--results", "vcp"},
	} {
		if code, _, errOut := d.ctl(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2: %s", bad, code, errOut)
		}
	}
}

// gateTool blocks its call with wait=1 until a call with open=1 has
// finished: run one after another, a reply that calls wait before open
// never finishes; run in parallel, it does, and wait's result still comes
// first because it is the first call.
type gateTool struct{ opened chan struct{} }

func (gateTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Gate", Description: "waits for its twin", Commands: []toolhost.Command{{Command: "Gate", Description: "d"}},
		Source: "test", DistributedExposed: true}
}

func (g gateTool) Invoke(ctx context.Context, c toolhost.Call) (any, error) {
	if _, ok := c.Args["open"]; ok {
		close(g.opened)
		return "opened", nil
	}
	select {
	case <-g.opened:
		return "passed", nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestCallTextParallel(t *testing.T) {
	d := startDaemon(t, "[tools.Gate]\nexpose = true\ntimeout = \"60s\"\n", gateTool{opened: make(chan struct{})})
	d.accept()
	reply := "<function_calls>\n<invoke name=\"Gate\"><parameter name=\"wait\">1</parameter></invoke>\n" +
		"<invoke name=\"Gate\"><parameter name=\"open\">1</parameter></invoke>\n</function_calls>\n"
	file := writeFile(t, "reply.txt", reply, 0o600)
	code, out, errOut := d.ctl("call", "--text", file, "--parallel", "--results", "vcp")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	out = regexp.MustCompile(`(?m)^request_id:「始」call_[A-Z2-7]{24}「末」\n`).ReplaceAllString(out, "")
	want := "<<<[TOOL_RESULT]>>>\ntool_name:「始」Gate「末」\nstatus:「始」success「末」\ncontent:「始」passed「末」\n<<<[END_TOOL_RESULT]>>>\n\n" +
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」Gate「末」\nstatus:「始」success「末」\ncontent:「始」opened「末」\n<<<[END_TOOL_RESULT]>>>\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestCallTextResultIDs runs a reply's calls and writes their results in
// the formats that pair a result with its call by id: the id a block
// carried (a VCP request_id, a tool_calls id) is echoed and never reaches
// the tool as an argument; a call without one gets a generated id.
func TestCallTextResultIDs(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	d.accept()
	reply := "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」,\nrequest_id:「始」req-1「末」,\nmessage:「始」one「末」\n<<<[END_TOOL_REQUEST]>>>\n" +
		`{"tool_calls": [{"id": "call_x", "type": "function", "function": {"name": "Echo", "arguments": "{\"message\": \"two\"}"}}]}` + "\n" +
		"<function_calls><invoke name=\"Echo\"><parameter name=\"message\">three</parameter></invoke></function_calls>\n"
	file := writeFile(t, "reply.txt", reply, 0o600)
	generated := regexp.MustCompile(`^call_[A-Z2-7]{24}$`)

	code, out, errOut := d.ctl("call", "--text", file, "--results", "openai")
	var msgs []struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &msgs); code != exitOK || err != nil || len(msgs) != 3 {
		t.Fatalf("openai: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	for i, m := range msgs {
		if m.Role != "tool" || !strings.Contains(m.Content, []string{"one", "two", "three"}[i]) || strings.Contains(m.Content, "request_id") {
			t.Errorf("message %d: %+v", i, m)
		}
	}
	if msgs[0].ToolCallID != "req-1" || msgs[1].ToolCallID != "call_x" || !generated.MatchString(msgs[2].ToolCallID) {
		t.Errorf("ids: %q %q %q", msgs[0].ToolCallID, msgs[1].ToolCallID, msgs[2].ToolCallID)
	}

	for format, key := range map[string]string{"anthropic": `"tool_use_id": "req-1"`, "gemini": `"id": "req-1"`,
		"tool_call_result": `"toolCallId": "req-1"`, "vcp": "request_id:「始」req-1「末」", "xml": `"id": "req-1"`} {
		code, out, errOut := d.ctl("call", "--text", file, "--results", format)
		if code != exitOK || !strings.Contains(out, key) || !strings.Contains(out, "call_x") {
			t.Errorf("%s: exit %d, want %s and call_x:\n%s\n%s", format, code, key, out, errOut)
		}
	}

	code, out, _ = d.ctl("call", "--text", file, "--json")
	var results []TextCallResult
	if err := json.Unmarshal([]byte(out), &results); code != exitOK || err != nil || len(results) != 3 ||
		results[0].Call.ID != "req-1" || !generated.MatchString(results[2].Call.ID) {
		t.Errorf("json: exit %d %v\n%s", code, err, out)
	}
	if _, ok := results[0].Call.Args["request_id"]; ok {
		t.Errorf("request_id is an argument: %s", out)
	}
}

// TestCallTextSkipsExamples: a call inside a Markdown code fence is an
// example: call --text reports it and does not run it; --fenced runs it;
// --formats limits the formats read.
func TestCallTextSkipsExamples(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	d.accept()
	reply := "Call it like this:\n```xml\n<function_calls><invoke name=\"Echo\"><parameter name=\"message\">example</parameter></invoke></function_calls>\n```\n" +
		"<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」,\nmessage:「始」real「末」\n<<<[END_TOOL_REQUEST]>>>\n"
	file := writeFile(t, "reply.txt", reply, 0o600)

	code, out, errOut := d.ctl("call", "--text", file, "--json")
	var results []TextCallResult
	if err := json.Unmarshal([]byte(out), &results); code != exitOK || err != nil || len(results) != 1 || results[0].Call.Format != "vcp" {
		t.Fatalf("exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if !strings.Contains(errOut, "line 3: xml call of Echo not run: it is inside a code fence") {
		t.Errorf("stderr: %s", errOut)
	}

	code, out, errOut = d.ctl("call", "--text", file, "--json", "--fenced")
	results = nil
	if err := json.Unmarshal([]byte(out), &results); code != exitOK || err != nil || len(results) != 2 || !results[0].Call.Example {
		t.Errorf("--fenced: exit %d %v\n%s\n%s", code, err, out, errOut)
	}

	code, out, errOut = d.ctl("call", "--text", file, "--formats", "xml")
	if code != exitError || !strings.Contains(errOut, "no tool call found outside code fences (1 example(s) skipped") {
		t.Errorf("--formats xml: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = d.ctl("call", "--text", file, "--json", "--formats", "vcp")
	results = nil
	if err := json.Unmarshal([]byte(out), &results); code != exitOK || err != nil || len(results) != 1 {
		t.Errorf("--formats vcp: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	if code, _, errOut := d.ctl("call", "--text", file, "--formats", "yaml"); code != exitUsage || !strings.Contains(errOut, "not one of vcp, xml") {
		t.Errorf("--formats yaml: exit %d %s", code, errOut)
	}
}

// The workspace tools answer to snake_case names: `tools` lists
// them, a reply calling list_directory in a <tool_code> tag runs
// DirectoryTree, and the tool is registered once, under its own name.
func TestSnakeCaseNames(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	conn := d.accept()
	_, out, _ := d.ctl("tools")
	if !strings.Contains(out, "also called as: list_directory → DirectoryTree, read_file → ReadFile, search_files → SearchFiles\n") {
		t.Errorf("tools does not list the aliases:\n%s", out)
	}
	reply := `<tool_code>{"name": "list_directory", "arguments": {"path": "."}}</tool_code>`
	file := writeFile(t, "reply.txt", reply, 0o600)
	code, out, errOut := d.ctl("call", "--text", file, "--json")
	var results []TextCallResult
	// DirectoryTree ran: this daemon has no file roots, and says so.
	if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != 1 || results[0].Response.Outcome != "error" ||
		!strings.Contains(results[0].Response.Error, "[files] roots is empty") {
		t.Fatalf("exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	m, err := conn.WaitType(d.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(m); strings.Contains(string(raw), "list_directory") {
		t.Errorf("an alias was registered: %s", raw)
	}
}
