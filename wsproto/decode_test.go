package wsproto

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var longID = strings.Repeat("r", 5000)

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name     string
		frame    string
		wantText string // the whole error text
		wantIs   error
		wantType Type
		wantReq  string
	}{
		// The frame itself.
		{"empty frame", ``, "decode: frame: not valid JSON: unexpected end of JSON input (at byte 0)", ErrNotJSON, "", ""},
		{"garbage", `hello`, "decode: frame: not valid JSON: invalid character 'h' looking for beginning of value (at byte 1)", ErrNotJSON, "", ""},
		{"truncated", `{"type":"execute_tool","data":{"requestId":"r1"`, "decode: frame: not valid JSON: unexpected end of JSON input (at byte 47)", ErrNotJSON, "", ""},
		{"trailing garbage", `{"type":"cancel_tool","data":{"requestId":"r1"}} x`, "decode: frame: not valid JSON: invalid character 'x' after top-level value (at byte 50)", ErrNotJSON, "", ""},
		{"array frame", `[{"type":"cancel_tool"}]`, "decode: frame: want object, got array", ErrNotObject, "", ""},
		{"string frame", `"execute_tool"`, "decode: frame: want object, got string", ErrNotObject, "", ""},
		{"number frame", ` 42 `, "decode: frame: want object, got number", ErrNotObject, "", ""},
		{"bool frame", `true`, "decode: frame: want object, got boolean", ErrNotObject, "", ""},
		{"null frame", `null`, "decode: frame: want object, got null", ErrNotObject, "", ""},

		// The envelope.
		{"no type", `{"data":{"requestId":"r1"}}`, "decode: type: missing", ErrMissingField, "", "r1"},
		{"null type", `{"type":null,"data":{}}`, "decode: type: missing", ErrMissingField, "", ""},
		{"empty type", `{"type":"","data":{}}`, "decode: type: missing", ErrMissingField, "", ""},
		{"number type", `{"type":7,"data":{"requestId":"r1"}}`, "decode: type: want string, got number", ErrWrongType, "", "r1"},
		{"object type", `{"type":{"name":"execute_tool"}}`, "decode: type: want string, got object", ErrWrongType, "", ""},
		{"no data", `{"type":"execute_tool"}`, "decode execute_tool: data: missing", ErrMissingField, TypeExecuteTool, ""},
		{"null data", `{"type":"execute_tool","data":null}`, "decode execute_tool: data: missing", ErrMissingField, TypeExecuteTool, ""},
		{"array data", `{"type":"execute_tool","data":[{"requestId":"r1"}]}`, "decode execute_tool: data: want object, got array", ErrNotObject, TypeExecuteTool, ""},
		{"string data", `{"type":"cancel_tool","data":"r1"}`, "decode cancel_tool: data: want object, got string", ErrNotObject, TypeCancelTool, ""},

		// execute_tool.
		{"execute no requestId", `{"type":"execute_tool","data":{"toolName":"Echo","toolArgs":{}}}`, "decode execute_tool: requestId: missing", ErrMissingField, TypeExecuteTool, ""},
		{"execute empty requestId", `{"type":"execute_tool","data":{"requestId":"","toolName":"Echo"}}`, "decode execute_tool: requestId: missing", ErrMissingField, TypeExecuteTool, ""},
		{"execute number requestId", `{"type":"execute_tool","data":{"requestId":12,"toolName":"Echo"}}`, "decode execute_tool: requestId: want string, got number", ErrWrongType, TypeExecuteTool, ""},
		{"execute no toolName", `{"type":"execute_tool","data":{"requestId":"r1","toolArgs":{}}}`, "decode execute_tool: toolName: missing", ErrMissingField, TypeExecuteTool, "r1"},
		{"execute null toolName", `{"type":"execute_tool","data":{"requestId":"r1","toolName":null}}`, "decode execute_tool: toolName: missing", ErrMissingField, TypeExecuteTool, "r1"},
		{"execute array toolName", `{"type":"execute_tool","data":{"requestId":"r1","toolName":["Echo"]}}`, "decode execute_tool: toolName: want string, got array", ErrWrongType, TypeExecuteTool, "r1"},
		{"execute string toolArgs", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"Echo","toolArgs":"text:hi"}}`, "decode execute_tool: toolArgs: want object, got string", ErrWrongType, TypeExecuteTool, "r1"},
		{"execute array toolArgs before requestId", `{"type":"execute_tool","data":{"toolArgs":[1],"toolName":"Echo","requestId":"r1"}}`, "decode execute_tool: toolArgs: want object, got array", ErrWrongType, TypeExecuteTool, "r1"},
		{"execute string context", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"Echo","_vcpContext":"trusted"}}`, "decode execute_tool: _vcpContext: want object, got string", ErrWrongType, TypeExecuteTool, "r1"},
		{"execute array context", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"Echo","_vcpContext":[]}}`, "decode execute_tool: _vcpContext: want object, got array", ErrWrongType, TypeExecuteTool, "r1"},
		{"execute huge requestId kept whole, not echoed", `{"type":"execute_tool","data":{"requestId":"` + longID + `"}}`, "decode execute_tool: toolName: missing", ErrMissingField, TypeExecuteTool, longID},

		// tool_result.
		{"result no requestId", `{"type":"tool_result","data":{"status":"success"}}`, "decode tool_result: requestId: missing", ErrMissingField, TypeToolResult, ""},
		{"result no status", `{"type":"tool_result","data":{"requestId":"r1","result":{}}}`, "decode tool_result: status: missing", ErrMissingField, TypeToolResult, "r1"},
		{"result bad status", `{"type":"tool_result","data":{"requestId":"r1","status":"done"}}`, `decode tool_result: status: want "success" or "error", got "done"`, ErrInvalidValue, TypeToolResult, "r1"},
		{"result huge status truncated", `{"type":"tool_result","data":{"requestId":"r1","status":"` + strings.Repeat("x", 1000) + `"}}`, `decode tool_result: status: want "success" or "error", got "` + strings.Repeat("x", 64) + `"…`, ErrInvalidValue, TypeToolResult, "r1"},
		{"result bool status", `{"type":"tool_result","data":{"requestId":"r1","status":true}}`, "decode tool_result: status: want string, got boolean", ErrWrongType, TypeToolResult, "r1"},
		{"result error without text", `{"type":"tool_result","data":{"requestId":"r1","status":"error"}}`, `decode tool_result: error: missing (required when status is "error")`, ErrMissingField, TypeToolResult, "r1"},
		{"result object error", `{"type":"tool_result","data":{"requestId":"r1","status":"error","error":{"code":500}}}`, "decode tool_result: error: want string, got object", ErrWrongType, TypeToolResult, "r1"},

		// cancel_tool.
		{"cancel no requestId", `{"type":"cancel_tool","data":{}}`, "decode cancel_tool: requestId: missing", ErrMissingField, TypeCancelTool, ""},
		{"cancel bool requestId", `{"type":"cancel_tool","data":{"requestId":false}}`, "decode cancel_tool: requestId: want string, got boolean", ErrWrongType, TypeCancelTool, ""},

		// plugin_callback_forward.
		{"callback missing data", `{"type":"plugin_callback_forward","data":{"serverName":"n1"}}`, "decode plugin_callback_forward: callbackData: missing", ErrMissingField, TypePluginCallbackForward, ""},
		{"callback null data", `{"type":"plugin_callback_forward","data":{"callbackData":null}}`, "decode plugin_callback_forward: callbackData: missing", ErrMissingField, TypePluginCallbackForward, ""},
		{"callback string data", `{"type":"plugin_callback_forward","data":{"callbackData":"{}"}}`, "decode plugin_callback_forward: callbackData: want object, got string", ErrWrongType, TypePluginCallbackForward, ""},
		{"callback number serverName", `{"type":"plugin_callback_forward","data":{"serverName":1,"callbackData":{}}}`, "decode plugin_callback_forward: serverName: want string, got number", ErrWrongType, TypePluginCallbackForward, ""},

		// update_static_placeholders.
		{"placeholders missing", `{"type":"update_static_placeholders","data":{"serverName":"n1"}}`, "decode update_static_placeholders: placeholders: missing", ErrMissingField, TypeUpdateStaticPlaceholders, ""},
		{"placeholders array", `{"type":"update_static_placeholders","data":{"placeholders":[]}}`, "decode update_static_placeholders: placeholders: want object of strings, got array", ErrWrongType, TypeUpdateStaticPlaceholders, ""},
		{"placeholder number value", `{"type":"update_static_placeholders","data":{"placeholders":{"{{A}}":"x","{{B}}":3}}}`, "decode update_static_placeholders: placeholders: want object of strings, got an object holding a number", ErrWrongType, TypeUpdateStaticPlaceholders, ""},

		// register_tools.
		{"tools missing", `{"type":"register_tools","data":{"capabilities":{"cancelTool":true}}}`, "decode register_tools: tools: missing", ErrMissingField, TypeRegisterTools, ""},
		{"tools object", `{"type":"register_tools","data":{"tools":{"name":"Echo"}}}`, "decode register_tools: tools: want array, got object", ErrWrongType, TypeRegisterTools, ""},
		{"tools element number", `{"type":"register_tools","data":{"tools":[{"name":"Echo"},7]}}`, "decode register_tools: tools[1]: want object, got number", ErrWrongType, TypeRegisterTools, ""},
		{"tools element null", `{"type":"register_tools","data":{"tools":[null]}}`, "decode register_tools: tools[0]: want object, got null", ErrWrongType, TypeRegisterTools, ""},
		{"capabilities array", `{"type":"register_tools","data":{"capabilities":["cancelTool"],"tools":[]}}`, "decode register_tools: capabilities: want object, got array", ErrWrongType, TypeRegisterTools, ""},
		{"cancelTool string", `{"type":"register_tools","data":{"capabilities":{"cancelTool":"true"},"tools":[]}}`, "decode register_tools: capabilities.cancelTool: want boolean, got string", ErrWrongType, TypeRegisterTools, ""},

		// report_ip.
		{"localIPs missing", `{"type":"report_ip","data":{"publicIP":"203.0.113.7"}}`, "decode report_ip: localIPs: missing", ErrMissingField, TypeReportIP, ""},
		{"localIPs string", `{"type":"report_ip","data":{"localIPs":"192.168.1.20"}}`, "decode report_ip: localIPs: want array of strings, got string", ErrWrongType, TypeReportIP, ""},
		{"localIPs element number", `{"type":"report_ip","data":{"localIPs":["192.168.1.20",3232235796]}}`, "decode report_ip: localIPs: want array of strings, got an array holding a number", ErrWrongType, TypeReportIP, ""},
		{"publicIP array", `{"type":"report_ip","data":{"localIPs":[],"publicIP":[]}}`, "decode report_ip: publicIP: want string, got array", ErrWrongType, TypeReportIP, ""},

		// connection_ack.
		{"ack no data", `{"type":"connection_ack","message":"hi"}`, "decode connection_ack: data: missing", ErrMissingField, TypeConnectionAck, ""},
		{"ack number message", `{"type":"connection_ack","message":1,"data":{}}`, "decode connection_ack: message: want string, got number", ErrWrongType, TypeConnectionAck, ""},
		{"ack number serverId", `{"type":"connection_ack","data":{"serverId":1}}`, "decode connection_ack: serverId: want string, got number", ErrWrongType, TypeConnectionAck, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode([]byte(tt.frame))
			if err == nil {
				t.Fatalf("Decode succeeded with %#v, want an error", m)
			}
			if m != nil {
				t.Errorf("Decode returned %#v alongside its error, want nil", m)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is %T, want *DecodeError", err, err)
			}
			if got := err.Error(); got != tt.wantText {
				t.Errorf("error text\n got: %s\nwant: %s", got, tt.wantText)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if de.Type != tt.wantType {
				t.Errorf("Type = %q, want %q", de.Type, tt.wantType)
			}
			if de.RequestID != tt.wantReq {
				t.Errorf("RequestID = %q, want %q", truncate(de.RequestID), truncate(tt.wantReq))
			}
			if len(err.Error()) > 200 {
				t.Errorf("error text is %d bytes long; payloads must not leak into errors", len(err.Error()))
			}
		})
	}
}

func TestDecodeNotJSONKeepsSyntaxError(t *testing.T) {
	_, err := Decode([]byte(`{"type":`))
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		t.Fatalf("errors.As(%v, *json.SyntaxError) = false", err)
	}
	if syn.Offset != 8 {
		t.Errorf("syntax error offset = %d, want 8", syn.Offset)
	}
}

// TestDecodeValues pins the values Decode returns, including its
// normalisations (null toolArgs, null _vcpContext, case-insensitive keys,
// invalid UTF-8, duplicate keys).
func TestDecodeValues(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name  string
		frame string
		want  Message
	}{
		{"connection_ack with message", `{"type":"connection_ack","message":"ok","data":{"serverId":"dist-a-b","clientId":"a-b"}}`,
			ConnectionAck{Message: "ok", ServerID: "dist-a-b", ClientID: "a-b"}},
		{"connection_ack without message or ids", `{"type":"connection_ack","data":{}}`, ConnectionAck{}},
		{"execute_tool keeps raw args", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{"s":"10","a":[1, 2],"o":{"k":null},"n":null}}}`,
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"s": raw(`"10"`), "a": raw(`[1, 2]`), "o": raw(`{"k":null}`), "n": raw(`null`)}}},
		{"execute_tool without toolArgs", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"T"}}`,
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{}}},
		{"execute_tool null context", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{},"_vcpContext":null}}`,
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{}}},
		{"execute_tool context", `{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","_vcpContext":{"a":1}}}`,
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{}, VCPContext: raw(`{"a":1}`)}},
		{"unknown fields and keys in any case", `{"TYPE":"cancel_tool","extra":[1],"Data":{"RequestId":"r9","reason":"timeout"}}`,
			CancelTool{RequestID: "r9"}},
		{"duplicate keys: last wins, as in JSON.parse", `{"type":"cancel_tool","data":{"requestId":"a","requestId":"b"}}`,
			CancelTool{RequestID: "b"}},
		{"invalid UTF-8 becomes U+FFFD", "{\"type\":\"execute_tool\",\"data\":{\"requestId\":\"r\xff\",\"toolName\":\"T\",\"toolArgs\":{\"x\":\"a\xc3\"}}}",
			ExecuteTool{RequestID: "r\uFFFD", ToolName: "T", ToolArgs: map[string]json.RawMessage{"x": raw("\"a\uFFFD\"")}}},
		{"tool_result null result kept", `{"type":"tool_result","data":{"requestId":"r1","status":"success","result":null}}`,
			ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw(`null`)}},
		{"tool_result success may carry error text", `{"type":"tool_result","data":{"requestId":"r1","status":"success","error":"warn"}}`,
			ToolResult{RequestID: "r1", Status: StatusSuccess, Error: "warn"}},
		{"unknown type with odd data", `{"type":"vcp_log","data":[1,2],"message":{"x":1}}`,
			Unknown{TypeName: "vcp_log", Data: raw(`[1,2]`)}},
		{"unknown type without data", `{"type":"heartbeat_ack"}`, Unknown{TypeName: "heartbeat_ack"}},
		{"unknown type named like a known one in another case", `{"type":"Execute_Tool","data":{}}`,
			Unknown{TypeName: "Execute_Tool", Data: raw(`{}`)}},
		{"report_ip empty list", `{"type":"report_ip","data":{"localIPs":[]}}`, ReportIP{LocalIPs: []string{}}},
		{"register_tools empty list", `{"type":"register_tools","data":{"tools":[]}}`, RegisterTools{Tools: []json.RawMessage{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := []byte(tt.frame)
			before := string(frame)
			got, err := Decode(frame)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Decode\n got: %#v\nwant: %#v", got, tt.want)
			}
			if string(frame) != before {
				t.Fatalf("Decode modified its input")
			}
		})
	}
}
