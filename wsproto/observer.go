package wsproto

import (
	"encoding/json"
	"fmt"
)

// The observer channels (/VCPlog/, /vcpinfo/ of VCPToolBox's
// WebSocketServer.js) carry broadcasts with no fixed schema beside the node connection. These
// are the shapes the node reads and the one frame it writes there.

// Types on the observer channels.
const (
	TypeVCPLog               Type = "vcp_log"
	TypeToolApprovalRequest  Type = "tool_approval_request"
	TypeToolApprovalResponse Type = "tool_approval_response"
)

// Broadcast is the envelope of every observer frame. Unknown types are
// events, never errors.
type Broadcast struct {
	Type    Type            `json:"type"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// VCPLogData is what a vcp_log (or a plugin's broadcast) usually carries;
// every field is optional, and servers spell the tool name two ways.
type VCPLogData struct {
	ToolName  string `json:"tool_name"`
	ToolName2 string `json:"toolName"`
	Status    string `json:"status"`
	Content   any    `json:"content"`
	Message   string `json:"message"`
}

// ApprovalRequest is the data of tool_approval_request: a call the server
// holds until a human answers, for ApprovalTTLMs (0: the server's 5 min).
type ApprovalRequest struct {
	RequestID     string                     `json:"requestId"`
	ToolName      string                     `json:"toolName"`
	Maid          string                     `json:"maid"`
	Args          map[string]json.RawMessage `json:"args"`
	Timestamp     string                     `json:"timestamp"`
	ApprovalTTLMs int64                      `json:"approvalTtlMs"`
}

// ApprovalResponse is the data of tool_approval_response, sent on /VCPlog/.
type ApprovalResponse struct {
	RequestID string `json:"requestId"`
	Approved  bool   `json:"approved"`
	Reason    string `json:"reason"`
}

// EncodeApprovalResponse is the tool_approval_response frame for r.
func EncodeApprovalResponse(r ApprovalResponse) ([]byte, error) {
	raw, err := json.Marshal(struct {
		Type Type             `json:"type"`
		Data ApprovalResponse `json:"data"`
	}{TypeToolApprovalResponse, r})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", TypeToolApprovalResponse, err)
	}
	return raw, nil
}
