package textproto

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Result formats: how the results of a reply's calls are written back for
// the model to read.
const (
	ResultsVCP            = "vcp"              // AIO Hub's <<<[TOOL_RESULT]>>> blocks
	ResultsXML            = "xml"              // the XML format's tool_result event, for its agent loop
	ResultsOpenAI         = "openai"           // OpenAI chat messages of role "tool"
	ResultsAnthropic      = "anthropic"        // an Anthropic user message of tool_result blocks
	ResultsGemini         = "gemini"           // a Gemini user content of functionResponse parts
	ResultsToolCallResult = "tool_call_result" // the XML_Tag strategy's {"tool_call_result"} user message
	ResultsJSON           = "json"             // the calls and the daemon's answers as they are
)

// ResultFormats lists the result formats.
var ResultFormats = []string{ResultsVCP, ResultsXML, ResultsOpenAI, ResultsAnthropic, ResultsGemini, ResultsToolCallResult, ResultsJSON}

// ToolResult is one call's outcome.
type ToolResult struct {
	Tool string
	// ID is the call's id (Call.ID): the one its format carried, or one
	// generated for it (NewCallID). The formats that match a result with
	// its call by id (openai, anthropic, gemini, tool_call_result) generate
	// one when it is empty.
	ID string
	OK bool
	// Result is the tool's result as JSON when OK.
	Result json.RawMessage
	// Error is the error text when not OK.
	Error string
}

// content is what the model reads as a result's body: a string result as
// its text, a result that is only text parts ({"content": [{"type":
// "text", "text": …}…]}, as plugins and MCP tools answer) as those texts,
// any other result as compact JSON, an error as its text.
func (r ToolResult) content() string {
	if !r.OK {
		return r.Error
	}
	var s string
	if json.Unmarshal(r.Result, &s) == nil {
		return s
	}
	if text, ok := textParts(r.Result); ok {
		return text
	}
	return string(compactJSON(string(r.Result)))
}

// textParts joins the texts of a {"content": [{"type": "text", "text"}…]}
// result that holds nothing else.
func textParts(raw json.RawMessage) (string, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || len(top) != 1 || top["content"] == nil {
		return "", false
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(top["content"], &parts) != nil || len(parts) == 0 {
		return "", false
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		var typ, text string
		if len(p) != 2 || json.Unmarshal(p["type"], &typ) != nil || typ != "text" || json.Unmarshal(p["text"], &text) != nil {
			return "", false
		}
		texts = append(texts, text)
	}
	return strings.Join(texts, "\n"), true
}

// The markers of AIO Hub's result blocks.
const (
	resultStart = "<<<[TOOL_RESULT]>>>"
	resultEnd   = "<<<[END_TOOL_RESULT]>>>"
)

// VCPResults writes one <<<[TOOL_RESULT]>>> block per result, in order:
// the tool's name, status (success or error, as AIO Hub's
// ToolExecutionResult), the call's id when it had one, and the content,
// each as a VCP value.
func VCPResults(results []ToolResult) string {
	blocks := make([]string, 0, len(results))
	for _, r := range results {
		fields := [][2]string{{"tool_name", r.Tool}}
		if r.ID != "" {
			fields = append(fields, [2]string{"request_id", r.ID})
		}
		status := "success"
		if !r.OK {
			status = "error"
		}
		fields = append(fields, [2]string{"status", status}, [2]string{"content", r.content()})
		blocks = append(blocks, vcpBlock(resultStart, resultEnd, fields))
	}
	return strings.Join(blocks, "\n\n")
}

// FormatResults writes results in one of ResultFormats but ResultsJSON
// (that one is the caller's own JSON of its calls and answers); at stamps
// the XML format's event.
func FormatResults(format string, results []ToolResult, at time.Time) (string, error) {
	switch format {
	case ResultsVCP:
		return VCPResults(results), nil
	case ResultsXML:
		return ResultEvent(results, at)
	case ResultsOpenAI:
		return OpenAIResults(withIDs(results))
	case ResultsAnthropic:
		return AnthropicResults(withIDs(results))
	case ResultsGemini:
		return GeminiResults(withIDs(results))
	case ResultsToolCallResult:
		return ToolCallResults(withIDs(results))
	}
	written := slices.DeleteFunc(slices.Clone(ResultFormats), func(f string) bool { return f == ResultsJSON })
	return "", fmt.Errorf("result format %q is not one of %s", format, strings.Join(written, ", "))
}

// resultEvent is the XML format's event: {"type": "tool_result", "timestamp",
// "data": {"results": [{"tool_name", "success", "result"}]}}.
type resultEvent struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Results []eventResult `json:"results"`
	} `json:"data"`
}

type eventResult struct {
	ToolName string          `json:"tool_name"`
	ID       string          `json:"id,omitempty"`
	Success  bool            `json:"success"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// ResultEvent is the XML format's tool_result event for a batch, indented,
// its timestamp at's local time as that format writes it (no zone).
func ResultEvent(results []ToolResult, at time.Time) (string, error) {
	ev := resultEvent{Type: "tool_result", Timestamp: at.Format("2006-01-02T15:04:05")}
	ev.Data.Results = make([]eventResult, 0, len(results))
	for _, r := range results {
		er := eventResult{ToolName: r.Tool, ID: r.ID, Success: r.OK}
		if r.OK {
			er.Result = r.Result
			if len(er.Result) == 0 {
				er.Result = json.RawMessage("null")
			}
		} else {
			er.Error = r.Error
		}
		ev.Data.Results = append(ev.Data.Results, er)
	}
	return indentJSON(ev)
}
