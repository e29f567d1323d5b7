package node

import (
	"reflect"

	"github.com/vcpnode/vcpnode/config"
)

// reloadRule is what a reload does with one table of the config: the
// table is named in the report's Changed when it differs, and in
// RestartNeeded when the part of it a reload does not apply differs.
type reloadRule struct {
	section string                  // the table, as the report names it
	value   func(config.Config) any // every setting of the table
	// kept is the part a reload leaves as it was until a restart (nil:
	// a reload applies the whole table), named keptName in the report.
	kept     func(config.Config) any
	keptName string
}

// reloadRules is the one list of what a reload applies; every table of
// config.Config has a row (TestReloadRulesCoverEveryTable).
var reloadRules = []reloadRule{
	{section: "hub", value: func(c config.Config) any { return c.Hub }},
	{section: "node", value: func(c config.Config) any { return c.Node },
		kept: func(c config.Config) any {
			return [3]int{c.Node.MaxConcurrent, c.Node.Queue, c.Node.MaxResultBytes}
		}, keptName: "node.max_concurrent, node.queue and node.max_result_bytes"},
	{section: "files", value: func(c config.Config) any { return c.Files }},
	whole("log", func(c config.Config) any { return c.Log }),
	{section: "tools", value: func(c config.Config) any { return c.Tools }},
	{section: "plugins", value: func(c config.Config) any { return c.Plugins }},
	whole("control", func(c config.Config) any { return c.Control }),        // the socket is open
	{section: "audit", value: func(c config.Config) any { return c.Audit }}, // from the next call
	whole("metrics", func(c config.Config) any { return c.Metrics }),        // its listener
	whole("console", func(c config.Config) any { return c.Console }),        // its listener and sessions
	{section: "placeholders", value: func(c config.Config) any { return c.Placeholders }},
	{section: "mcp", value: func(c config.Config) any { return c.MCP }},
	whole("observer", func(c config.Config) any { return c.Observer }),          // connections made at start
	{section: "sandbox", value: func(c config.Config) any { return c.Sandbox }}, // from the next process started
}

// whole is the rule of a table a reload does not apply at all.
func whole(section string, value func(config.Config) any) reloadRule {
	return reloadRule{section: section, value: value, kept: value, keptName: section}
}

// reloadSections lists the tables that differ between old and cfg, and
// among them what only a restart applies.
func reloadSections(old, cfg config.Config) (changed, restartNeeded []string) {
	for _, r := range reloadRules {
		if reflect.DeepEqual(r.value(old), r.value(cfg)) {
			continue
		}
		changed = append(changed, r.section)
		if r.kept != nil && !reflect.DeepEqual(r.kept(old), r.kept(cfg)) {
			restartNeeded = append(restartNeeded, r.keptName)
		}
	}
	return changed, restartNeeded
}
