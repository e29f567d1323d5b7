// Package bridge is the node's client of the server's VCPToolBridge plugin
// (protocol.md §2.5): it asks the server which of its own tools it offers
// to nodes, and runs them for callers on this machine (`vcpnode server
// call`, MCP clients of `vcpnode mcp`).
//
// The hub session owns the connection; it hands this package every bridge
// frame it reads and a function that sends on the connection in place.
// Each server tool becomes a toolhost.Tool named vcp_<ServerTool>, so calls
// pass the node's approval gate, audit trail and metrics like any other.
// Such tools are never registered back with the server.
package bridge
