// Package toolhost owns the tools this node can run: the Tool interface and
// its Spec, the Registry, the exposure policy, the dispatcher that bounds and
// times calls, the selection of a typed tool's command and the invocation
// text taught to the model, the wire manifests, and the demo's example
// tools. What one command's parameters are and how its arguments are
// checked is toolhost/schema's.
//
// The tool sources live beside it: toolhost/plugin (VCP plugin folders),
// toolhost/direct (direct plugins in Node.js), toolhost/mcp (MCP servers),
// toolhost/builtin and toolhost/files (the node's own tools). Beside them,
// toolhost/textproto parses and writes the text protocol, and
// toolhost/proctree and toolhost/sandbox run and confine the processes a
// call starts.
package toolhost
