// Package node connects this machine to a VCP main server as a distributed
// node: it owns the lifecycle (New, Run, shutdown), the composition of tool
// sources (toolset.go) and reload, and answers the control API as
// control's Backend (api.go).
//
// What it composes lives in packages of its own: the hub session and its
// reconnect loop in hubsession (hub.go is what it asks of the node), the
// liveness of every WebSocket in hubconn (the only way to the socket), the observer channels
// in observer, the event log, audit trail and metrics in events, the
// callbacks' outbox in outbox, placeholder values in placeholders and
// their jobs, status and pushes in placeholders/feed, the process trees of
// every process starter in toolhost/proctree, the tools in toolhost and
// its subpackages, each kind of tools as a source in toolsource's
// subpackages (the plugin folders in toolsource/plugins).
package node
