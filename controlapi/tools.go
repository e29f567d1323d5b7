package controlapi

import (
	"encoding/json"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// ToolOverrideRequest is POST /v1/tools/{name}/override. Fields left out
// keep their value; Reset removes the tool's switches.
type ToolOverrideRequest struct {
	Expose   *bool  `json:"expose,omitempty"`
	Approval string `json:"approval,omitempty"`
	// Timeout is a duration ("45s") checked like [tools.NAME] timeout, or
	// config.TimeoutDefault for the config file's value
	// (config.ParseToolTimeout).
	Timeout string `json:"timeout,omitempty"`
	Reset   bool   `json:"reset,omitempty"`
}

// ToolOverrideResponse is the tool's switches after the change.
type ToolOverrideResponse struct {
	Tool     string              `json:"tool"`
	Override config.ToolOverride `json:"override"`
	File     string              `json:"file"`
	ReloadReport
}

// PromptResponse is GET /v1/prompt?format=FORMAT (textproto.PromptFormats):
// what a model is told about the tools this node exposes
// to the server right now. Format is the canonical name.
type PromptResponse struct {
	Format string `json:"format"`
	// Tools counts the tools described.
	Tools int    `json:"tools"`
	Text  string `json:"text"`
}

// ParseRequest is POST /v1/parse.
type ParseRequest struct {
	Text string `json:"text"`
	// Fuzzy matches markers as the server does with fuzzy matching on.
	Fuzzy bool `json:"fuzzy,omitempty"`
}

// ParseResponse is what the reply held: textproto.Result.
type ParseResponse = textproto.Result

// MCPTool is one tool as `vcpnode mcp` publishes it in tools/list.
type MCPTool struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Description is the tool's description; for a tool without a schema,
	// followed by its invocation text (what the VCP server is told).
	Description string `json:"description"`
	// InputSchema is a JSON Schema object: the tool's own (typed tools), or
	// one that takes string arguments (plugins, which have no schema).
	InputSchema json.RawMessage `json:"inputSchema"`
	Typed       bool            `json:"typed"`
}

// MCPToolsResponse is GET /v1/mcp/tools.
type MCPToolsResponse struct {
	Tools []MCPTool `json:"tools"`
}

// ResultsRequest is POST /v1/results: answers of PathCall to write in a
// result format (textproto.ResultsVCP or textproto.ResultsXML).
type ResultsRequest struct {
	Format  string       `json:"format"`
	Results []CallAnswer `json:"results"`
}

// CallAnswer is one call's answer: the call's own id (textproto.Call.ID),
// if any, and what PathCall answered.
type CallAnswer struct {
	ID       string       `json:"id,omitempty"`
	Response CallResponse `json:"response"`
}

// ToolResult is the answer as textproto writes it back.
func (a CallAnswer) ToolResult() textproto.ToolResult {
	r := a.Response
	return textproto.ToolResult{Tool: r.Tool, ID: a.ID, OK: r.OK, Result: r.Result, Error: r.Error}
}

// ResultsResponse is the text of POST /v1/results.
type ResultsResponse struct {
	Format string `json:"format"`
	Text   string `json:"text"`
}
