package wsproto

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Encode returns m as one compact UTF-8 JSON frame {"type":…,"data":{…}}
// (connection_ack also carries "message"), ready to send as a text frame.
//
// It checks what the server relies on and refuses to send anything else:
//   - tool_result: requestId set, status "success" or "error", and a
//     non-empty Error when the status is "error". A nil Result is left out
//     of the frame (the server then sees an undefined result); any other
//     Result must be valid JSON and is sent as it is, null included.
//   - register_tools: every Tools entry is a JSON object; nil Tools is sent
//     as [] because the server ignores a frame whose tools is not an array.
//     Capabilities are always sent, since the server replaces them on every
//     register_tools.
//   - plugin_callback_forward: CallbackData is a JSON object.
//   - execute_tool (for test hubs): requestId and toolName set, _vcpContext
//     an object if set; nil ToolArgs is sent as {}.
//
// Raw JSON values are compacted, and invalid UTF-8 in them or in strings
// becomes U+FFFD. Map keys are written in sorted order, so output is
// deterministic. Messages must be passed by value, as Decode returns them;
// Unknown, nil and pointers fail with ErrNotEncodable.
func Encode(m Message) ([]byte, error) {
	var (
		frame []byte
		err   error
	)
	switch v := m.(type) {
	case ToolResult:
		frame, err = encodeToolResult(v)
	case ExecuteTool:
		frame, err = encodeExecuteTool(v)
	case RegisterTools:
		frame, err = encodeRegisterTools(v)
	case ReportIP:
		frame, err = encodeReportIP(v)
	case UpdateStaticPlaceholders:
		frame, err = encodeUpdateStaticPlaceholders(v)
	case CancelTool:
		frame, err = encodeCancelTool(v)
	case PluginCallbackForward:
		frame, err = encodePluginCallbackForward(v)
	case ConnectionAck:
		frame, err = encodeConnectionAck(v)
	case GetVCPManifests:
		return encodeBridge(TypeGetVCPManifests, v)
	case ExecuteVCPTool:
		if v.ToolArgs == nil {
			v.ToolArgs = map[string]json.RawMessage{}
		}
		return encodeBridge(TypeExecuteVCPTool, v)
	case VCPManifestResponse:
		return encodeBridge(TypeVCPManifestResponse, v)
	case VCPToolResult:
		return encodeBridge(TypeVCPToolResult, v)
	case VCPToolStatus:
		frame, err = encodeVCPToolStatus(v)
	case Unknown:
		return nil, fmt.Errorf("encode %s: %w: Unknown frames are received, never sent",
			quote(v.TypeName), ErrNotEncodable)
	case nil:
		return nil, fmt.Errorf("encode: %w: nil message", ErrNotEncodable)
	default:
		return nil, fmt.Errorf("encode: %w: %T (pass one of this package's message types by value)",
			ErrNotEncodable, m)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.MessageType(), err)
	}
	return frame, nil
}

func encodeToolResult(m ToolResult) ([]byte, error) {
	if err := checkToolResult(&m); err != nil {
		return nil, err
	}
	w := newFrameWriter(TypeToolResult, "",
		48+len(m.RequestID)+len(m.Result)+len(m.Error)+len(m.Error)/8)
	w.str("requestId", m.RequestID)
	w.str("status", m.Status)
	if len(m.Result) > 0 {
		if err := w.raw("result", "result", m.Result, ""); err != nil {
			return nil, err
		}
	}
	w.optStr("error", m.Error)
	return w.end(), nil
}

func encodeExecuteTool(m ExecuteTool) ([]byte, error) {
	if m.RequestID == "" {
		return nil, missing("requestId")
	}
	if m.ToolName == "" {
		return nil, missing("toolName")
	}
	size := 64 + len(m.RequestID) + len(m.ToolName) + len(m.VCPContext)
	for k, v := range m.ToolArgs {
		size += len(k) + len(v) + 4
	}
	w := newFrameWriter(TypeExecuteTool, "", size)
	w.str("requestId", m.RequestID)
	w.str("toolName", m.ToolName)
	w.key("toolArgs")
	w.open('{')
	for _, k := range slices.Sorted(maps.Keys(m.ToolArgs)) {
		w.comma()
		w.b = appendString(w.b, k)
		w.b = append(w.b, ':')
		if err := w.rawValue("toolArgs["+quote(k)+"]", m.ToolArgs[k], ""); err != nil {
			return nil, err
		}
	}
	w.close('}')
	if !isAbsent(m.VCPContext) {
		if err := w.raw("_vcpContext", "_vcpContext", m.VCPContext, "object"); err != nil {
			return nil, err
		}
	}
	return w.end(), nil
}

func encodeRegisterTools(m RegisterTools) ([]byte, error) {
	size := 64 + len(m.ServerName)
	for _, t := range m.Tools {
		size += len(t) + 1
	}
	w := newFrameWriter(TypeRegisterTools, "", size)
	w.optStr("serverName", m.ServerName)
	w.key("capabilities")
	w.open('{')
	w.bool("cancelTool", m.Capabilities.CancelTool)
	if err := writeMachine(&w, m.Capabilities); err != nil {
		return nil, err
	}
	w.close('}')
	w.key("tools")
	w.open('[')
	for i, t := range m.Tools {
		w.comma()
		if err := w.rawValue(fmt.Sprintf("tools[%d]", i), t, "object"); err != nil {
			return nil, err
		}
	}
	w.close(']')
	return w.end(), nil
}

// writeMachine writes the node's description into capabilities.
func writeMachine(w *frameWriter, c Capabilities) error {
	w.optStr("os", c.OS)
	w.optStr("arch", c.Arch)
	w.optStr("hostname", c.Hostname)
	w.optStr("version", c.Version)
	if len(c.Labels) > 0 {
		w.strMap("labels", c.Labels)
	}
	if len(c.GPUs) > 0 {
		raw, err := json.Marshal(c.GPUs)
		if err != nil {
			return err
		}
		if err := w.raw("gpus", "capabilities.gpus", raw, ""); err != nil {
			return err
		}
	}
	if c.SandboxEnforced != nil {
		w.bool("sandboxEnforced", *c.SandboxEnforced)
	}
	return nil
}

func encodeReportIP(m ReportIP) ([]byte, error) {
	size := 48 + len(m.ServerName) + len(m.PublicIP)
	for _, ip := range m.LocalIPs {
		size += len(ip) + 3
	}
	w := newFrameWriter(TypeReportIP, "", size)
	w.optStr("serverName", m.ServerName)
	w.key("localIPs")
	w.open('[')
	for _, ip := range m.LocalIPs {
		w.comma()
		w.b = appendString(w.b, ip)
	}
	w.close(']')
	w.optStr("publicIP", m.PublicIP)
	return w.end(), nil
}

func encodeUpdateStaticPlaceholders(m UpdateStaticPlaceholders) ([]byte, error) {
	size := 48 + len(m.ServerName)
	for k, v := range m.Placeholders {
		size += len(k) + len(v) + 6
	}
	w := newFrameWriter(TypeUpdateStaticPlaceholders, "", size)
	w.optStr("serverName", m.ServerName)
	w.strMap("placeholders", m.Placeholders)
	return w.end(), nil
}

func encodeCancelTool(m CancelTool) ([]byte, error) {
	if m.RequestID == "" {
		return nil, missing("requestId")
	}
	w := newFrameWriter(TypeCancelTool, "", 16+len(m.RequestID))
	w.str("requestId", m.RequestID)
	return w.end(), nil
}

func encodePluginCallbackForward(m PluginCallbackForward) ([]byte, error) {
	if isAbsent(m.CallbackData) {
		return nil, missing("callbackData")
	}
	w := newFrameWriter(TypePluginCallbackForward, "", 48+len(m.ServerName)+len(m.CallbackData))
	w.optStr("serverName", m.ServerName)
	if err := w.raw("callbackData", "callbackData", m.CallbackData, "object"); err != nil {
		return nil, err
	}
	return w.end(), nil
}

func encodeConnectionAck(m ConnectionAck) ([]byte, error) {
	w := newFrameWriter(TypeConnectionAck, m.Message, 32+len(m.ServerID)+len(m.ClientID))
	w.str("serverId", m.ServerID)
	w.str("clientId", m.ClientID)
	return w.end(), nil
}

// ToolResultParts returns a successful tool_result frame around a result
// the caller writes itself between head and tail (a file streamed as it is
// read): head ends with `"result":`, tail closes the frame. The result
// written between them must be one JSON value.
func ToolResultParts(requestID string) (head, tail []byte, err error) {
	if requestID == "" {
		return nil, nil, missing("requestId")
	}
	w := newFrameWriter(TypeToolResult, "", 48+len(requestID))
	w.str("requestId", requestID)
	w.str("status", StatusSuccess)
	w.key("result")
	return w.b, []byte("}}"), nil
}
