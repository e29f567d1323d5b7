// Package files owns the node's file rules and internal_request_file, the
// tool the main server calls to pull a file:// URL from this node. It turns
// file:// URLs into local paths, keeps every request inside the configured
// [files] roots (symlinks resolved, the deny list and secret names refused,
// private keys found by content), opens files without following a symlink
// swapped in since the check, and writes the file base64-encoded into the
// tool_result frame. Access applies the same rules for the workspace tools
// in toolhost/builtin, so every tool answers the same path the same way.
package files
