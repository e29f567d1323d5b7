// The package documentation is in doc.go.

package wsproto

import "encoding/json"

// Type is the envelope's "type" field.
type Type string

// Message types the node sends or receives.
const (
	TypeConnectionAck            Type = "connection_ack"
	TypeRegisterTools            Type = "register_tools"
	TypeReportIP                 Type = "report_ip"
	TypeUpdateStaticPlaceholders Type = "update_static_placeholders"
	TypeExecuteTool              Type = "execute_tool"
	TypeToolResult               Type = "tool_result"
	TypeCancelTool               Type = "cancel_tool"
	TypePluginCallbackForward    Type = "plugin_callback_forward"
)

// Result statuses of a tool_result.
const (
	StatusSuccess = "success"
	StatusError   = "error"
)

// Message is implemented by every message type.
type Message interface {
	MessageType() Type
}

// ConnectionAck is the server's first frame (servers since 2026-02-20).
type ConnectionAck struct {
	Message  string `json:"-"`
	ServerID string `json:"serverId"`
	ClientID string `json:"clientId"`
}

// RegisterTools announces the node's tools. Tools holds manifests already
// rebuilt for the wire (see toolhost); each must be a JSON object.
type RegisterTools struct {
	ServerName   string            `json:"serverName,omitempty"`
	Capabilities Capabilities      `json:"capabilities"`
	Tools        []json.RawMessage `json:"tools"`
}

// Capabilities declares optional protocol features the node implements,
// and what the server shows of the node in its node list: the server
// stores the object as it is. Nothing in it may be secret.
type Capabilities struct {
	CancelTool bool `json:"cancelTool"`
	// The machine: runtime.GOOS, runtime.GOARCH, the host name, the
	// vcpnode version.
	OS       string `json:"os,omitempty"`
	Arch     string `json:"arch,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Version  string `json:"version,omitempty"`
	// Labels are the owner's [node] labels.
	Labels map[string]string `json:"labels,omitempty"`
	// GPUs are the machine's NVIDIA GPUs where it tells; absent otherwise.
	GPUs []GPU `json:"gpus,omitempty"`
	// SandboxEnforced says whether tools' processes run confined.
	SandboxEnforced *bool `json:"sandboxEnforced,omitempty"`
}

// GPU is one graphics card as the driver names it.
type GPU struct {
	Name     string `json:"name"`
	MemoryMB int    `json:"memoryMB,omitempty"`
}

// ReportIP reports the node's addresses; the server routes file fetches by them.
type ReportIP struct {
	ServerName string   `json:"serverName,omitempty"`
	LocalIPs   []string `json:"localIPs"`
	PublicIP   string   `json:"publicIP,omitempty"`
}

// UpdateStaticPlaceholders merges placeholder values into the server's table.
type UpdateStaticPlaceholders struct {
	ServerName   string            `json:"serverName,omitempty"`
	Placeholders map[string]string `json:"placeholders"`
}

// ExecuteTool asks the node to run a tool. ToolArgs keeps every value as raw
// JSON: they are mostly strings, but arrays and objects do arrive.
type ExecuteTool struct {
	RequestID  string                     `json:"requestId"`
	ToolName   string                     `json:"toolName"`
	ToolArgs   map[string]json.RawMessage `json:"toolArgs"`
	VCPContext json.RawMessage            `json:"_vcpContext,omitempty"`
}

// ToolResult answers an ExecuteTool. Status is StatusSuccess with Result, or
// StatusError with Error. Encode leaves a nil Result out of the frame and
// refuses a StatusError result with an empty Error.
type ToolResult struct {
	RequestID string          `json:"requestId"`
	Status    string          `json:"status"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// CancelTool tells the node the server gave up on a call.
type CancelTool struct {
	RequestID string `json:"requestId"`
}

// PluginCallbackForward carries an asynchronous plugin's late result.
// CallbackData must be a JSON object holding pluginName and taskId.
type PluginCallbackForward struct {
	ServerName   string          `json:"serverName,omitempty"`
	CallbackData json.RawMessage `json:"callbackData"`
}

// Unknown is any frame whose type the node does not handle. The node ignores it.
type Unknown struct {
	TypeName string
	Data     json.RawMessage
}

func (ConnectionAck) MessageType() Type            { return TypeConnectionAck }
func (RegisterTools) MessageType() Type            { return TypeRegisterTools }
func (ReportIP) MessageType() Type                 { return TypeReportIP }
func (UpdateStaticPlaceholders) MessageType() Type { return TypeUpdateStaticPlaceholders }
func (ExecuteTool) MessageType() Type              { return TypeExecuteTool }
func (ToolResult) MessageType() Type               { return TypeToolResult }
func (CancelTool) MessageType() Type               { return TypeCancelTool }
func (PluginCallbackForward) MessageType() Type    { return TypePluginCallbackForward }
func (u Unknown) MessageType() Type                { return Type(u.TypeName) }
