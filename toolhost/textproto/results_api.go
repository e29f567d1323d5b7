package textproto

import (
	"crypto/rand"
	"encoding/json"
)

// NewCallID is an id for a call whose format carried none, in OpenAI's
// shape ("call_" and 24 letters and digits), so a result written in a
// format that pairs results with calls by id has one to name.
func NewCallID() string {
	return "call_" + rand.Text()[:24]
}

// EnsureIDs gives every call without an id a new one (NewCallID), so its
// result can name it in any format.
func EnsureIDs(calls []Call) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = NewCallID()
		}
	}
}

// withIDs is results with a new id for each result that has none.
func withIDs(results []ToolResult) []ToolResult {
	out := make([]ToolResult, len(results))
	for i, r := range results {
		if r.ID == "" {
			r.ID = NewCallID()
		}
		out[i] = r
	}
	return out
}

// contentValue is the result as a JSON value: the text content() gives as
// a JSON string when the result is text (a string, or only text parts),
// the result's own JSON otherwise; an error is its text.
func (r ToolResult) contentValue() json.RawMessage {
	if r.OK && len(r.Result) > 0 {
		var s string
		if _, ok := textParts(r.Result); !ok && json.Unmarshal(r.Result, &s) != nil && json.Valid(r.Result) {
			return compactJSON(string(r.Result))
		}
	}
	return stringJSON(r.content())
}

// OpenAIResults is one OpenAI chat message per result, as the next request
// carries them after the assistant's tool_calls: {"role": "tool",
// "tool_call_id", "content"}; the content is the result's text (an error
// is its text: the message has no error flag).
func OpenAIResults(results []ToolResult) (string, error) {
	type message struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
	}
	msgs := make([]message, len(results))
	for i, r := range results {
		msgs[i] = message{Role: "tool", ToolCallID: r.ID, Content: r.content()}
	}
	return indentJSON(msgs)
}

// AnthropicResults is the one user message that answers a turn's tool_use
// blocks: a tool_result block per result, {"type": "tool_result",
// "tool_use_id", "content"}, with "is_error": true for a failed call.
// Anthropic wants every result of a turn in that one message.
func AnthropicResults(results []ToolResult) (string, error) {
	type block struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	msg := struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}{Role: "user", Content: make([]block, len(results))}
	for i, r := range results {
		msg.Content[i] = block{Type: "tool_result", ToolUseID: r.ID, Content: r.content(), IsError: !r.OK}
	}
	return indentJSON(msg)
}

// GeminiResults is the user content that answers a turn's functionCall
// parts: one functionResponse part per result, {"id", "name", "response"}.
// Gemini takes an object as response: {"output": …} for a result (its text,
// or its JSON when it is not text), {"error": "…"} for a failed call.
func GeminiResults(results []ToolResult) (string, error) {
	type functionResponse struct {
		ID       string                     `json:"id"`
		Name     string                     `json:"name"`
		Response map[string]json.RawMessage `json:"response"`
	}
	type part struct {
		FunctionResponse functionResponse `json:"functionResponse"`
	}
	content := struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}{Role: "user", Parts: make([]part, len(results))}
	for i, r := range results {
		key := "output"
		if !r.OK {
			key = "error"
		}
		content.Parts[i] = part{functionResponse{ID: r.ID, Name: r.Tool, Response: map[string]json.RawMessage{key: r.contentValue()}}}
	}
	return indentJSON(content)
}

// ToolCallResults is the XML_Tag and JSON_Strict strategies' answer, written back as a user message
// because the model called its tools in text: one {"tool_call_result":
// {"toolCallId", "name", "result"}} object per result ("isError": true for
// a failed call, its result the error text), separated by blank lines.
func ToolCallResults(results []ToolResult) (string, error) {
	type body struct {
		ToolCallID string `json:"toolCallId"`
		Name       string `json:"name"`
		Result     string `json:"result"`
		IsError    bool   `json:"isError,omitempty"`
	}
	var out []byte
	for i, r := range results {
		s, err := indentJSON(struct {
			ToolCallResult body `json:"tool_call_result"`
		}{body{ToolCallID: r.ID, Name: r.Tool, Result: r.content(), IsError: !r.OK}})
		if err != nil {
			return "", err
		}
		if i > 0 {
			out = append(out, "\n\n"...)
		}
		out = append(out, s...)
	}
	return string(out), nil
}
