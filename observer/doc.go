// Package observer keeps the node's connections to the VCP server's
// observer channels (/VCPlog/, /vcpinfo/ of VCPToolBox's server): one per
// channel beside the node connection, each with its own reconnect loop, so
// a failing one never disturbs the node session or the other.
//
// Broadcasts become events in an events.Log; tool_approval_request
// broadcasts become server approvals, which Answer settles with a
// tool_approval_response on the channel they came from. Replays after a
// reconnect are dropped (approvals by requestId, other broadcasts by
// content). Watch runs a set without a daemon for `vcpnode watch`.
//
// Each connection's liveness (dial, deadlines, pings, close with redaction)
// is hubconn's; this package knows the channels' messages (wsproto), not
// the node.
package observer
