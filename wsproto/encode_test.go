package wsproto

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEncodeFrames(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"success without result omits the field",
			ToolResult{RequestID: "r1", Status: StatusSuccess},
			`{"type":"tool_result","data":{"requestId":"r1","status":"success"}}`},
		{"success with null result keeps it",
			ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw(`null`)},
			`{"type":"tool_result","data":{"requestId":"r1","status":"success","result":null}}`},
		{"result is compacted, HTML is not escaped",
			ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw("{\n  \"text\": \"<b>&</b>\"\n}")},
			`{"type":"tool_result","data":{"requestId":"r1","status":"success","result":{"text":"<b>&</b>"}}}`},
		{"invalid UTF-8 in a raw result is replaced",
			ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw("\"a\xffb\"")},
			"{\"type\":\"tool_result\",\"data\":{\"requestId\":\"r1\",\"status\":\"success\",\"result\":\"a\uFFFDb\"}}"},
		{"error text is escaped",
			ToolResult{RequestID: "r1", Status: StatusError, Error: "line1\nq\"\\\t\x01\xfe</x> 猫"},
			`{"type":"tool_result","data":{"requestId":"r1","status":"error","error":"line1\nq\"\\\t\u0001\ufffd</x> 猫"}}`},
		{"execute_tool sorts args and defaults them to {}",
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"z": raw(`"1"`), "a": raw(`[1, 2]`)}},
			`{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{"a":[1,2],"z":"1"}}}`},
		{"execute_tool nil args and null context",
			ExecuteTool{RequestID: "r1", ToolName: "T", VCPContext: raw(`null`)},
			`{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{}}}`},
		{"execute_tool with context",
			ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"k\"": raw(`1`)}, VCPContext: raw(`{"a": 1}`)},
			`{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{"k\"":1},"_vcpContext":{"a":1}}}`},
		{"register_tools with nil tools still sends an array and capabilities",
			RegisterTools{},
			`{"type":"register_tools","data":{"capabilities":{"cancelTool":false},"tools":[]}}`},
		{"register_tools",
			RegisterTools{ServerName: "n1", Capabilities: Capabilities{CancelTool: true}, Tools: []json.RawMessage{raw(`{"name":"A"}`), raw(` {"name":"B"}`)}},
			`{"type":"register_tools","data":{"serverName":"n1","capabilities":{"cancelTool":true},"tools":[{"name":"A"},{"name":"B"}]}}`},
		{"report_ip nil list",
			ReportIP{ServerName: "n1"},
			`{"type":"report_ip","data":{"serverName":"n1","localIPs":[]}}`},
		{"report_ip",
			ReportIP{LocalIPs: []string{"192.168.1.20", "fd00::1"}, PublicIP: "203.0.113.7"},
			`{"type":"report_ip","data":{"localIPs":["192.168.1.20","fd00::1"],"publicIP":"203.0.113.7"}}`},
		{"placeholders sorted, nil map is {}",
			UpdateStaticPlaceholders{},
			`{"type":"update_static_placeholders","data":{"placeholders":{}}}`},
		{"placeholders",
			UpdateStaticPlaceholders{ServerName: "n1", Placeholders: map[string]string{"{{B}}": "$$2", "A": ""}},
			`{"type":"update_static_placeholders","data":{"serverName":"n1","placeholders":{"A":"","{{B}}":"$$2"}}}`},
		{"cancel_tool",
			CancelTool{RequestID: "r1"},
			`{"type":"cancel_tool","data":{"requestId":"r1"}}`},
		{"plugin_callback_forward",
			PluginCallbackForward{ServerName: "n1", CallbackData: raw(`{"pluginName":"P","taskId":"t1"}`)},
			`{"type":"plugin_callback_forward","data":{"serverName":"n1","callbackData":{"pluginName":"P","taskId":"t1"}}}`},
		{"connection_ack without message",
			ConnectionAck{ServerID: "dist-a", ClientID: "a"},
			`{"type":"connection_ack","data":{"serverId":"dist-a","clientId":"a"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.msg)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Encode\n got: %s\nwant: %s", got, tt.want)
			}
			if _, err := Decode(got); err != nil {
				t.Fatalf("Decode of Encode's output: %v", err)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name     string
		msg      Message
		wantText string
		wantIs   error
	}{
		{"result without requestId", ToolResult{Status: StatusSuccess}, "encode tool_result: requestId: missing", ErrMissingField},
		{"result without status", ToolResult{RequestID: "r1"}, "encode tool_result: status: missing", ErrMissingField},
		{"result with other status", ToolResult{RequestID: "r1", Status: "ok"}, `encode tool_result: status: want "success" or "error", got "ok"`, ErrInvalidValue},
		{"error result without text", ToolResult{RequestID: "r1", Status: StatusError}, `encode tool_result: error: missing (required when status is "error")`, ErrMissingField},
		{"result not JSON", ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw(`{"a":`)}, "encode tool_result: result: not valid JSON: unexpected end of JSON input (at byte 5)", ErrNotJSON},
		{"result two values", ToolResult{RequestID: "r1", Status: StatusSuccess, Result: raw(`1 2`)}, "encode tool_result: result: not valid JSON: invalid character '2' after top-level value (at byte 3)", ErrNotJSON},
		{"execute without requestId", ExecuteTool{ToolName: "T"}, "encode execute_tool: requestId: missing", ErrMissingField},
		{"execute without toolName", ExecuteTool{RequestID: "r1"}, "encode execute_tool: toolName: missing", ErrMissingField},
		{"execute empty arg", ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"k": nil}}, `encode execute_tool: toolArgs["k"]: missing`, ErrMissingField},
		{"execute bad arg", ExecuteTool{RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"k": raw(`hi`)}}, `encode execute_tool: toolArgs["k"]: not valid JSON: invalid character 'h' looking for beginning of value (at byte 1)`, ErrNotJSON},
		{"execute array context", ExecuteTool{RequestID: "r1", ToolName: "T", VCPContext: raw(`[]`)}, "encode execute_tool: _vcpContext: want object, got array", ErrWrongType},
		{"tool that is not an object", RegisterTools{Tools: []json.RawMessage{raw(`{}`), raw(`"Echo"`)}}, "encode register_tools: tools[1]: want object, got string", ErrWrongType},
		{"tool that is not JSON", RegisterTools{Tools: []json.RawMessage{raw(`{name:1}`)}}, "encode register_tools: tools[0]: not valid JSON: invalid character 'n' looking for beginning of object key string (at byte 2)", ErrNotJSON},
		{"empty tool", RegisterTools{Tools: []json.RawMessage{nil}}, "encode register_tools: tools[0]: missing", ErrMissingField},
		{"callback without data", PluginCallbackForward{}, "encode plugin_callback_forward: callbackData: missing", ErrMissingField},
		{"callback null", PluginCallbackForward{CallbackData: raw(`null`)}, "encode plugin_callback_forward: callbackData: missing", ErrMissingField},
		{"callback array", PluginCallbackForward{CallbackData: raw(`[{"taskId":"t"}]`)}, "encode plugin_callback_forward: callbackData: want object, got array", ErrWrongType},
		{"cancel without requestId", CancelTool{}, "encode cancel_tool: requestId: missing", ErrMissingField},
		{"unknown", Unknown{TypeName: "vcp_log", Data: raw(`{}`)}, `encode "vcp_log": message cannot be encoded: Unknown frames are received, never sent`, ErrNotEncodable},
		{"nil", nil, "encode: message cannot be encoded: nil message", ErrNotEncodable},
		{"pointer", &ToolResult{RequestID: "r1", Status: StatusSuccess}, "encode: message cannot be encoded: *wsproto.ToolResult (pass one of this package's message types by value)", ErrNotEncodable},
		{"nil pointer", (*CancelTool)(nil), "encode: message cannot be encoded: *wsproto.CancelTool (pass one of this package's message types by value)", ErrNotEncodable},
		{"huge status is truncated", ToolResult{RequestID: "r1", Status: strings.Repeat("é", 100)}, `encode tool_result: status: want "success" or "error", got "` + strings.Repeat("é", 32) + `"…`, ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.msg)
			if err == nil {
				t.Fatalf("Encode succeeded with %s, want an error", got)
			}
			if got != nil {
				t.Errorf("Encode returned %q alongside its error, want nil", got)
			}
			if err.Error() != tt.wantText {
				t.Errorf("error text\n got: %s\nwant: %s", err, tt.wantText)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
		})
	}
}

// TestAppendStringMatchesEncodingJSON checks the hand-written string
// escaper against encoding/json on strings that need every kind of escape.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"quoted"`, `back\slash`, "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"<script>&amp;</script>", "\u2028\u2029", "猫🐈", "bad\xffutf8\xc3", "\xed\xa0\x80 surrogate",
		strings.Repeat("a\"", 1000),
	} {
		encoded := appendString(nil, s)
		if !json.Valid(encoded) {
			t.Fatalf("appendString(%q) = %s, not valid JSON", s, encoded)
		}
		var got string
		if err := json.Unmarshal(encoded, &got); err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("appendString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	}
}

func TestToolResultPartsMakeTheSameFrame(t *testing.T) {
	result := []byte(`{"status":"success","mimeType":"text/plain","fileData":"aGk="}`)
	head, tail, err := ToolResultParts("req\"1")
	if err != nil {
		t.Fatal(err)
	}
	frame := append(append(append([]byte{}, head...), result...), tail...)
	want, err := Encode(ToolResult{RequestID: "req\"1", Status: StatusSuccess, Result: result})
	if err != nil {
		t.Fatal(err)
	}
	if string(frame) != string(want) {
		t.Fatalf("parts give %s, Encode gives %s", frame, want)
	}
	if _, _, err := ToolResultParts(""); !errors.Is(err, ErrMissingField) {
		t.Errorf("empty requestId: %v", err)
	}
}
