package toolconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// checkWarm checks [plugins] warm and warm_pool against the plugin host's
// languages and pool bound, and each [tools.NAME] preload.
func checkWarm(ps *problems, cfg config.Config) {
	p := cfg.Plugins
	for _, lang := range p.WarmLanguages() {
		if !slices.Contains(plugin.WarmLanguages, lang) {
			ps.add("plugins.warm", "%q is not a language that can be kept warm (%s), like \"python\"",
				lang, strings.Join(plugin.WarmLanguages, ", "))
		}
	}
	if p.WarmPool < 1 || p.WarmPool > plugin.MaxWarmSize {
		ps.add("plugins.warm_pool", "must be between 1 and %d (got %d)", plugin.MaxWarmSize, p.WarmPool)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Tools)) {
		checkPreload(ps, name, cfg.Tools[name])
	}
}

// checkPreload checks [tools.NAME] preload: module names, at most
// plugin.MaxPreload of them, each once, on a tool that may be warm.
func checkPreload(ps *problems, name string, t config.ToolConfig) {
	if len(t.Preload) == 0 {
		return
	}
	key := config.KeyPath("tools", name, "preload")
	if t.Warm != nil && !*t.Warm {
		ps.add(key, "preloads modules into warm interpreters, and this tool has warm = false")
	}
	if len(t.Preload) > plugin.MaxPreload {
		ps.add(key, "lists %d modules, at most %d are allowed", len(t.Preload), plugin.MaxPreload)
	}
	for i, m := range t.Preload {
		if msg := plugin.PreloadProblem(m); msg != "" {
			ps.add(config.IndexKey(key, i), "%s", msg)
		} else if j := slices.Index(t.Preload, m); j < i {
			ps.add(config.IndexKey(key, i), "%q is listed twice", m)
		}
	}
}

// preloadWarnings: a preload on a tool nothing makes warm does nothing.
func preloadWarnings(cfg config.Config) []string {
	var ws []string
	for name, t := range cfg.Tools {
		if len(t.Preload) > 0 && t.Warm == nil && !slices.Contains(cfg.Plugins.WarmLanguages(), plugin.WarmPython) {
			ws = append(ws, fmt.Sprintf("%s has no effect: the tool is not warm (set warm = true there, or [plugins] warm = \"python\")",
				config.KeyPath("tools", name, "preload")))
		}
	}
	slices.Sort(ws)
	return ws
}

// checkPlaceholders checks the placeholder names (each one source) and
// the cron schedules of [placeholders] by the placeholder store's rules.
func checkPlaceholders(ps *problems, cfg config.Config) {
	p := cfg.Placeholders
	owners := map[string]string{} // normalised key → the TOML key that defines it
	claim := func(tomlKey, name string) {
		k, err := placeholders.NormalizeKey(name)
		if err != nil {
			ps.add(tomlKey, "%v", err)
			return
		}
		if first, ok := owners[k]; ok {
			ps.add(tomlKey, "%s is already defined by %s: a placeholder can have only one source", k, first)
			return
		}
		owners[k] = tomlKey
	}
	for _, name := range slices.Sorted(maps.Keys(p.Values)) {
		claim(config.KeyPath("placeholders", "values", name), name)
	}
	for i, cmd := range p.Command {
		key := config.IndexKey("placeholders.command", i)
		if cmd.Name != "" {
			claim(key+".name", cmd.Name)
		}
		if cmd.Cron != "" {
			if _, err := placeholders.ParseCron(cmd.Cron); err != nil {
				ps.add(key+".cron", "%v", err)
			}
		}
	}
	if p.System.Enabled {
		claim("placeholders.system.name", cfg.SystemPlaceholderName())
	}
}

// checkMCP checks that every [mcp.servers.NAME] gives a tool name the text
// protocol carries, and no two give the same.
func checkMCP(ps *problems, cfg config.Config) {
	tools := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(cfg.MCP.Servers)) {
		key := config.KeyPath("mcp", "servers", name)
		tool := mcp.ToolName(name, cfg.MCP.Servers[name].Tool)
		if !schema.Carriable(tool) {
			ps.add(key+".tool", "%q: a VCP tool name is letters, digits and _", tool)
		} else if other, dup := tools[tool]; dup {
			ps.add(key+".tool", "%q is already the tool of mcp.servers.%s; set tool = \"…\"", tool, other)
		}
		tools[tool] = name
	}
}

// checkFiles checks that a file of [files] max_bytes fits in one frame
// once the file tool has encoded it.
func checkFiles(ps *problems, cfg config.Config) {
	f := cfg.Files
	if f.MaxBytes <= 0 || len(f.Roots) == 0 {
		return // config's own problem, or file serving is off and the cap unused
	}
	// A file result is bounded by max_bytes itself (not by
	// node.max_result_bytes), so only the server's frame limit constrains it.
	if need := int64(files.ResultBytes(f.MaxBytes)); need > config.ServerFrameLimit {
		largest := files.MaxBytesFor(config.ServerFrameLimit)
		ps.add("files.max_bytes", "%d bytes would not fit in one frame once base64-encoded (%d bytes with the envelope, over the server's %d-byte frame limit); the largest allowed value is %d (%s)",
			f.MaxBytes, need, config.ServerFrameLimit, largest, config.HumanBytes(largest))
	}
}
