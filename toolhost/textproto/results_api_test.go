package textproto

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// goldenResults are one result of each kind: text parts with an id, a JSON
// result without text, a failed call, a string result.
var goldenResults = []ToolResult{
	{Tool: "ReadFile", ID: "call_abc123", OK: true, Result: json.RawMessage(`{"content": [{"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}]}`)},
	{Tool: "getTime", ID: "toolu_01ABCDEFGHIJKLMNOPQRST", OK: true, Result: json.RawMessage(`{"timestamp": 1684713600000, "zone": "UTC"}`)},
	{Tool: "WriteFile", ID: "req-7", OK: false, Error: "writing is not allowed: <path> is outside the roots"},
	{Tool: "Echo", ID: "call_4", OK: true, Result: json.RawMessage(`"a & b"`)},
}

// TestResultFormatsGolden checks every result format but json against the
// reviewed testdata/results/FORMAT.golden (-update rewrites them).
func TestResultFormatsGolden(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.Local)
	for _, f := range ResultFormats {
		if f == ResultsJSON {
			continue
		}
		t.Run(f, func(t *testing.T) {
			got, err := FormatResults(f, goldenResults, at)
			if err != nil {
				t.Fatal(err)
			}
			matchGolden(t, filepath.Join("testdata", "results", f+".golden"), got+"\n")
			if f == ResultsVCP || f == ResultsXML {
				return
			}
			if !json.Valid([]byte("[" + strings.ReplaceAll(got, "}\n\n{", "},{") + "]")) {
				t.Errorf("%s is not JSON:\n%s", f, got)
			}
		})
	}
}

// TestResultIDFromBlock: the id a call's block carries (VCP request_id,
// a tool_calls id, an XML invoke's id, a tag payload's id) is the call's
// id, never an argument, and every result format names it.
func TestResultIDFromBlock(t *testing.T) {
	reply := "<<<[TOOL_REQUEST]>>>\ntool_name:「始」ReadFile「末」,\nrequest_id:「始」req-42「末」,\npath:「始」a.txt「末」\n<<<[END_TOOL_REQUEST]>>>\n" +
		`{"tool_calls": [{"id": "call_xyz", "type": "function", "function": {"name": "getTime", "arguments": "{}"}}]}` + "\n" +
		"<function_calls><invoke name=\"Echo\" id=\"inv-3\"><parameter name=\"m\">hi</parameter></invoke></function_calls>\n" +
		`<tool_code>{"id": "tc-9", "name": "list_directory", "arguments": {"path": "/"}}</tool_code>` + "\n" +
		`{"tool_name": "Search", "request_id": "js-5", "parameters": {"q": "go"}}`
	res := Parse(reply, Options{})
	want := []string{"req-42", "call_xyz", "inv-3", "tc-9", "js-5"}
	if len(res.Calls) != len(want) {
		t.Fatalf("calls %+v, rejected %+v", res.Calls, res.Rejected)
	}
	for i, c := range res.Calls {
		if c.ID != want[i] {
			t.Errorf("call %d (%s): id %q, want %q", i, c.Format, c.ID, want[i])
		}
		for k := range c.Args {
			if k == "request_id" || k == "id" {
				t.Errorf("call %d (%s): the id is passed as argument %q", i, c.Format, k)
			}
		}
		if len(c.Notes) > 0 {
			t.Errorf("call %d notes: %v", i, c.Notes)
		}
	}
	for _, f := range ResultFormats {
		if f == ResultsJSON {
			continue
		}
		rs := make([]ToolResult, len(res.Calls))
		for i, c := range res.Calls {
			rs[i] = ToolResult{Tool: c.Tool, ID: c.ID, OK: true, Result: json.RawMessage(`"done"`)}
		}
		text, err := FormatResults(f, rs, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range want {
			if !strings.Contains(text, id) {
				t.Errorf("%s results do not echo id %q:\n%s", f, id, text)
			}
		}
	}
}

// TestResultIDGenerated: a call without an id gets one (EnsureIDs), and a
// result without one gets one in every format that pairs results with
// calls by id; the VCP and XML formats name an id only when there is one.
func TestResultIDGenerated(t *testing.T) {
	res := Parse("<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」\n<<<[END_TOOL_REQUEST]>>>", Options{})
	if len(res.Calls) != 1 || res.Calls[0].ID != "" {
		t.Fatalf("calls %+v", res.Calls)
	}
	shape := regexp.MustCompile(`^call_[A-Z2-7]{24}$`)
	EnsureIDs(res.Calls)
	first := res.Calls[0].ID
	if !shape.MatchString(first) {
		t.Errorf("generated id %q", first)
	}
	EnsureIDs(res.Calls)
	if res.Calls[0].ID != first {
		t.Errorf("EnsureIDs replaced an id: %q → %q", first, res.Calls[0].ID)
	}
	if NewCallID() == NewCallID() {
		t.Error("two generated ids are equal")
	}
	anyID := regexp.MustCompile(`call_[A-Z2-7]{24}`)
	for _, f := range []string{ResultsOpenAI, ResultsAnthropic, ResultsGemini, ResultsToolCallResult} {
		text, err := FormatResults(f, []ToolResult{{Tool: "Echo", OK: true, Result: json.RawMessage(`"x"`)}}, time.Now())
		if err != nil || !anyID.MatchString(text) {
			t.Errorf("%s (%v): no generated id in\n%s", f, err, text)
		}
	}
	text, _ := FormatResults(ResultsVCP, []ToolResult{{Tool: "Echo", OK: true, Result: json.RawMessage(`"x"`)}}, time.Now())
	if strings.Contains(text, "request_id") {
		t.Errorf("vcp result names an id its call did not have:\n%s", text)
	}
}
