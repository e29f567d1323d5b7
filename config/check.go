package config

import "time"

// A Check finds the problems of settings whose rules belong to a subsystem
// config knows nothing of: sandbox profiles, cron schedules, warm
// interpreters, MCP tool names, file result sizes. The composition root
// passes its checks to Load, Parse and Validate, so config imports no tool
// package and every package that only needs a setting or Redact stays
// light. A Problem's Key is the setting's TOML path (KeyPath, IndexKey).
type Check func(Config) []Problem

// KeyPath joins TOML key parts into a dotted path, quoting the parts that
// are not bare keys: KeyPath("tools", "my tool", "sandbox").
func KeyPath(parts ...string) string { return keyPath(parts...) }

// IndexKey is the path of element i of the array key: "plugins.dirs[2]".
func IndexKey(key string, i int) string { return indexKey(key, i) }

// The approval modes of [tools.NAME] approval and [tools.NAME.commands.CMD]
// approval, as the file writes them.
const (
	ApprovalAuto = "auto"
	ApprovalAsk  = "ask"
	ApprovalDeny = "deny"
)

// ApprovalModes lists the valid approval settings, for checks and messages.
var ApprovalModes = []string{ApprovalAuto, ApprovalAsk, ApprovalDeny}

// DefaultApprovalTimeout is how long an "ask" call waits for the owner
// when [tools.NAME] approval_timeout is not set.
const DefaultApprovalTimeout = 2 * time.Minute
