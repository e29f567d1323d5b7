// Package wsproto holds one Go type per message of the VCP distributed-node
// protocol and turns JSON frames into messages and back. It does no I/O and
// uses only the standard library.
//
// Every frame is an envelope {"type": "...", "data": {...}};
// connection_ack also carries a "message" string. What the real server
// sends and reads is VCPToolBox's WebSocketServer.js; the types follow it.
//
// Decode turns a frame into a message value (ExecuteTool, CancelTool, …),
// or Unknown for a type the node does not handle, which the node ignores.
// It checks every field the node relies on, and its errors are
// *DecodeError. When the frame has a string requestId, the error carries it,
// so the node can still answer a malformed execute_tool with an error
// tool_result. The sentinel errors (ErrNotJSON, ErrMissingField, …) let
// callers branch with errors.Is.
//
// Encode turns a message into a frame and refuses anything the server would
// drop or misread. It writes frames directly, without reflection, because it
// runs for every tool_result.
//
// Both directions are implemented for every known type: the node sends
// register_tools, report_ip, update_static_placeholders, tool_result and
// plugin_callback_forward, and test hubs send the rest. Whatever Decode
// accepts, Encode accepts too, and decoding Encode's output gives an equal
// message; FuzzDecode checks both.
package wsproto
