package node

import (
	"fmt"
	"path/filepath"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/direct"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// loadDirect brings the running direct plugins in line with a scan: new and
// changed modules are loaded (initialize()), removed ones shut down. With
// plugins nil every running one is shut down.
func (rt *pluginRuntime) loadDirect(cfg config.Config, plugins []*plugin.DirectPlugin) direct.Loaded {
	mem := map[string]int{}
	for name, t := range cfg.Tools {
		if t.MaxMemory > 0 {
			mem[name] = t.MaxMemory
		}
	}
	return rt.direct.Load(plugins, direct.Settings{Node: cfg.Plugins.Node, MaxMemoryMB: mem})
}

// directWarnings are the log lines for direct plugins that cannot run, or
// run without their HTTP routes.
func directWarnings(l direct.Loaded) []string {
	out := make([]string, 0, len(l.Unsupported)+len(l.Notices))
	for _, e := range l.Unsupported {
		out = append(out, fmt.Sprintf("plugin %q (%s) not hosted: %s", e.Name, e.Path, e.Reason))
	}
	for _, e := range l.Notices {
		out = append(out, fmt.Sprintf("plugin %q: %s", e.Name, e.Reason))
	}
	return out
}

// skippedDirect lists the direct plugins that run as no tool: services
// (running) and the ones that cannot run here.
func skippedDirect(l direct.Loaded) []SkippedPlugin {
	var out []SkippedPlugin
	for _, e := range l.Services {
		out = append(out, SkippedPlugin{Name: e.Name, Type: e.Type, Path: e.Path, Kind: "service", Reason: e.Reason})
	}
	for _, e := range l.Unsupported {
		out = append(out, SkippedPlugin{Name: e.Name, Type: e.Type, Path: e.Path, Kind: "unsupported", Reason: e.Reason})
	}
	return out
}

// isDirectScript says whether path is a JavaScript file in the folder of a
// direct plugin: editing one reloads that module on the next rescan.
func (rt *pluginRuntime) isDirectScript(path string) bool {
	switch filepath.Ext(path) {
	case ".js", ".mjs", ".cjs":
	default:
		return false
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.directDirs[filepath.Dir(path)]
}
