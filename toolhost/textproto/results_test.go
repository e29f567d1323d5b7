package textproto

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFormatResults(t *testing.T) {
	rs := []ToolResult{
		{Tool: "A", ID: "call_1", OK: true, Result: json.RawMessage(`{"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}`)},
		{Tool: "B", OK: true, Result: json.RawMessage(`{"n": 1, "s": "a < b"}`)},
		{Tool: "C", OK: false, Error: "bad 「末」 marker"},
		{Tool: "D", OK: true, Result: json.RawMessage(`"plain"`)},
	}
	got, err := FormatResults(ResultsVCP, rs, time.Time{})
	want := "<<<[TOOL_RESULT]>>>\ntool_name:「始」A「末」\nrequest_id:「始」call_1「末」\nstatus:「始」success「末」\ncontent:「始」one\ntwo「末」\n<<<[END_TOOL_RESULT]>>>\n\n" +
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」B「末」\nstatus:「始」success「末」\ncontent:「始」{\"n\":1,\"s\":\"a < b\"}「末」\n<<<[END_TOOL_RESULT]>>>\n\n" +
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」C「末」\nstatus:「始」error「末」\ncontent:「始ESCAPE」bad 「末」 marker「末ESCAPE」\n<<<[END_TOOL_RESULT]>>>\n\n" +
		"<<<[TOOL_RESULT]>>>\ntool_name:「始」D「末」\nstatus:「始」success「末」\ncontent:「始」plain「末」\n<<<[END_TOOL_RESULT]>>>"
	if err != nil || got != want {
		t.Errorf("vcp (%v):\n%s\nwant:\n%s", err, got, want)
	}
	at := time.Date(2024, 1, 1, 12, 0, 0, 0, time.Local)
	got, err = FormatResults(ResultsXML, rs[1:3], at)
	want = `{
  "type": "tool_result",
  "timestamp": "2024-01-01T12:00:00",
  "data": {
    "results": [
      {
        "tool_name": "B",
        "success": true,
        "result": {
          "n": 1,
          "s": "a < b"
        }
      },
      {
        "tool_name": "C",
        "success": false,
        "error": "bad 「末」 marker"
      }
    ]
  }
}`
	if err != nil || got != want {
		t.Errorf("xml (%v):\n%s", err, got)
	}
	if _, err := FormatResults("json", rs, at); err == nil || !strings.Contains(err.Error(), "not one of") {
		t.Errorf("json is the caller's: %v", err)
	}
}
