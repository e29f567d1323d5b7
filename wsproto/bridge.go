package wsproto

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The VCPToolBridge sub-protocol (protocol.md §2.5): a node lists and runs
// the server's own tools. The server answers only while its VCPToolBridge
// plugin is loaded and enabled; otherwise the requests are ignored.
const (
	TypeGetVCPManifests     Type = "get_vcp_manifests"
	TypeExecuteVCPTool      Type = "execute_vcp_tool"
	TypeVCPManifestResponse Type = "vcp_manifest_response"
	TypeVCPToolResult       Type = "vcp_tool_result"
	TypeVCPToolStatus       Type = "vcp_tool_status"
)

// GetVCPManifests asks for the server's tools (node → server).
type GetVCPManifests struct {
	RequestID string `json:"requestId"`
}

// ExecuteVCPTool runs one of the server's tools (node → server).
type ExecuteVCPTool struct {
	RequestID string                     `json:"requestId"`
	ToolName  string                     `json:"toolName"`
	ToolArgs  map[string]json.RawMessage `json:"toolArgs"`
}

// VCPPlugin is one server tool as vcp_manifest_response lists it. The
// server passes its plugins' manifests through unchecked, so decoding is
// lenient: a field of the wrong JSON type reads as empty rather than
// failing the whole list.
type VCPPlugin struct {
	Name         string `json:"name"`
	DisplayName  string `json:"displayName,omitempty"`
	Description  string `json:"description,omitempty"`
	Version      string `json:"version,omitempty"`
	Capabilities struct {
		InvocationCommands []VCPCommand `json:"invocationCommands"`
	} `json:"capabilities"`
}

// VCPCommand is one invocation command of a server tool. The server passes
// its plugins' manifests through: most name the command only by
// commandIdentifier, which Command then holds; fields other than these are
// ignored, and so is a value that is not a string.
type VCPCommand struct {
	Command     string `json:"command,omitempty"`
	Description string `json:"description,omitempty"`
	Example     string `json:"example,omitempty"`
}

// VCPManifestResponse answers GetVCPManifests (server → node).
type VCPManifestResponse struct {
	RequestID  string      `json:"requestId"`
	Plugins    []VCPPlugin `json:"plugins"`
	VCPVersion string      `json:"vcpVersion,omitempty"`
}

// VCPToolResult answers ExecuteVCPTool (server → node), and carries an
// asynchronous tool's late result with its taskId as RequestID. Error is
// kept raw: the server forwards whatever its plugin reported.
type VCPToolResult struct {
	RequestID string          `json:"requestId"`
	Status    string          `json:"status"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// VCPToolStatus is progress of an asynchronous server tool (server → node):
// the server's own log event, whose job_id or taskId names the task, with
// bridgeType "log" or "info". Data is the whole event.
type VCPToolStatus struct {
	TaskID     string
	BridgeType string
	Data       json.RawMessage
}

func (GetVCPManifests) MessageType() Type     { return TypeGetVCPManifests }
func (ExecuteVCPTool) MessageType() Type      { return TypeExecuteVCPTool }
func (VCPManifestResponse) MessageType() Type { return TypeVCPManifestResponse }
func (VCPToolResult) MessageType() Type       { return TypeVCPToolResult }
func (VCPToolStatus) MessageType() Type       { return TypeVCPToolStatus }

func init() {
	decoders[TypeGetVCPManifests] = decodeGetVCPManifests
	decoders[TypeExecuteVCPTool] = decodeExecuteVCPTool
	decoders[TypeVCPManifestResponse] = decodeVCPManifestResponse
	decoders[TypeVCPToolResult] = decodeVCPToolResult
	decoders[TypeVCPToolStatus] = decodeVCPToolStatus
}

func decodeGetVCPManifests(env *envelope) (Message, error) {
	var m GetVCPManifests
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeExecuteVCPTool(env *envelope) (Message, error) {
	var m ExecuteVCPTool
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.ToolName == "" {
		return nil, missing("toolName")
	}
	if m.ToolArgs == nil {
		m.ToolArgs = map[string]json.RawMessage{}
	}
	return m, nil
}

func decodeVCPManifestResponse(env *envelope) (Message, error) {
	var m VCPManifestResponse
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.Plugins == nil {
		m.Plugins = []VCPPlugin{}
	}
	return m, nil
}

func decodeVCPToolResult(env *envelope) (Message, error) {
	var m VCPToolResult
	if err := unmarshalData(env.Data, &m); err != nil {
		return nil, err
	}
	if m.RequestID == "" {
		return nil, missing("requestId")
	}
	if m.Status != StatusSuccess && m.Status != StatusError {
		return nil, invalidValue("status", `want "success" or "error", got `+quote(m.Status))
	}
	return m, nil
}

func decodeVCPToolStatus(env *envelope) (Message, error) {
	var ids struct {
		JobID      json.RawMessage `json:"job_id"`
		TaskID     json.RawMessage `json:"taskId"`
		BridgeType string          `json:"bridgeType"`
	}
	if err := json.Unmarshal(env.Data, &ids); err != nil {
		return nil, notJSON("data", err)
	}
	m := VCPToolStatus{BridgeType: ids.BridgeType, Data: append(json.RawMessage(nil), env.Data...)}
	// The server takes job_id first, then taskId; either may be a number.
	for _, raw := range []json.RawMessage{ids.JobID, ids.TaskID} {
		if id := ScalarText(raw); id != "" {
			m.TaskID = id
			break
		}
	}
	return m, nil
}

// ScalarText is a JSON string's text or a number's digits; "" for
// anything else, absent or null. The server's bridge reads a task's id so,
// wherever it stands.
func ScalarText(raw json.RawMessage) string {
	if isAbsent(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// encodeBridge writes the bridge frames; their shapes are the server's and
// need none of the checks of the node's own frames.
func encodeBridge(t Type, data any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // invocation examples are full of <<<…>>>
	if err := enc.Encode(struct {
		Type Type `json:"type"`
		Data any  `json:"data"`
	}{t, data}); err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func encodeVCPToolStatus(m VCPToolStatus) ([]byte, error) {
	if isAbsent(m.Data) || m.Data[0] != '{' {
		return nil, wrongType("data", "object", kindOf(m.Data))
	}
	return encodeBridge(TypeVCPToolStatus, m.Data)
}

// UnmarshalJSON reads a manifest's plugin entry; see VCPPlugin.
func (p *VCPPlugin) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name, DisplayName, Description, Version json.RawMessage
		Capabilities                            json.RawMessage
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		// Not an object: an entry the node cannot use, not a broken list.
		*p = VCPPlugin{}
		return nil
	}
	var caps struct {
		InvocationCommands json.RawMessage `json:"invocationCommands"`
	}
	_ = json.Unmarshal(raw.Capabilities, &caps)
	var cmds []json.RawMessage
	_ = json.Unmarshal(caps.InvocationCommands, &cmds)
	*p = VCPPlugin{Name: textOf(raw.Name), DisplayName: textOf(raw.DisplayName),
		Description: textOf(raw.Description), Version: ScalarText(raw.Version)}
	for _, c := range cmds {
		var cmd VCPCommand
		if err := json.Unmarshal(c, &cmd); err == nil {
			p.Capabilities.InvocationCommands = append(p.Capabilities.InvocationCommands, cmd)
		}
	}
	return nil
}

// UnmarshalJSON reads one invocation command; see VCPCommand.
func (c *VCPCommand) UnmarshalJSON(b []byte) error {
	var raw struct {
		Command           json.RawMessage `json:"command"`
		CommandIdentifier json.RawMessage `json:"commandIdentifier"`
		Description       json.RawMessage `json:"description"`
		Example           json.RawMessage `json:"example"`
	}
	if json.Unmarshal(b, &raw) != nil {
		*c = VCPCommand{}
		return nil
	}
	*c = VCPCommand{Command: textOf(raw.Command), Description: textOf(raw.Description), Example: textOf(raw.Example)}
	if c.Command == "" {
		c.Command = textOf(raw.CommandIdentifier)
	}
	return nil
}

// textOf is a JSON string's text; "" for anything else.
func textOf(raw json.RawMessage) string {
	var s string
	if isAbsent(raw) || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
