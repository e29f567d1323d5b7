package plugin

import (
	"encoding/json"
	"path/filepath"
	"strconv"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// DirectPlugin is a "direct" plugin (pluginType service or hybridservice,
// communication.protocol "direct") found by Scan: a JavaScript module that
// VCPToolBox loads into its own process. This package does not run it; a
// Node.js host (package toolhost/direct) does, with what is here.
type DirectPlugin struct {
	Name string
	// Type is "service" (initialized only) or "hybridservice" (also answers calls).
	Type string
	// Path is the manifest file; Dir the plugin folder, the module's working directory.
	Path, Dir string
	// Script is the absolute path of entryPoint.script, inside Dir.
	Script string
	// Env is the environment a stdio plugin of this folder would get
	// (sorted "K=V" entries): modules read process.env when they load.
	Env []string
	// Config is initialize's first argument, built by the stdio rules: the
	// plugin's config.env keys as strings, the configSchema keys resolved
	// and coerced (integers as numbers, booleans as true/false), DebugMode
	// and PROJECT_BASE_PATH. Never the hub key.
	Config json.RawMessage
	// APIRoutes: the manifest says "hasApiRoutes": true.
	APIRoutes bool
	// Spec is the tool a hybridservice plugin offers.
	Spec toolhost.Spec
	// Declared are the folders its manifest declares, as first seen.
	Declared *sandbox.Declared
	// Own are the variables of Env its own files set: the sandbox finds
	// its grants without them.
	Own []string
}

// Answers reports whether the plugin answers tool calls (a hybridservice).
func (p *DirectPlugin) Answers() bool { return p.Type == typeHybrid }

// newDirectPlugin describes m, a direct manifest in folder.
func newDirectPlugin(m *manifest, folder string, env []string, src envSources, conf map[string]string, projectBase string) *DirectPlugin {
	cfg := make(map[string]any, len(conf)+len(m.schema)+2)
	for k, v := range conf {
		cfg[k] = v
	}
	keys, dropped := resolveSchema(src, m, conf)
	for _, k := range dropped {
		delete(cfg, k)
	}
	for _, k := range keys {
		cfg[k.key] = typedValue(k)
	}
	cfg[envDebugMode] = debugMode(src, conf) == "true"
	cfg[envProjectBase] = projectBase
	raw, err := json.Marshal(cfg)
	if err != nil { // only strings, numbers and booleans: cannot happen
		raw = []byte("{}")
	}
	t := newTool(nil, m, nil)
	return &DirectPlugin{
		Name:      m.name,
		Type:      m.pluginType,
		Path:      m.path,
		Dir:       folder,
		Script:    filepath.Join(folder, m.script),
		Env:       env,
		Config:    raw,
		APIRoutes: m.apiRoutes,
		Spec:      t.spec,
		Declared:  &m.declared,
	}
}

// typedValue is a resolved key as VCPToolBox hands it to initialize: an
// integer as a number, a boolean as a boolean, anything else as text.
func typedValue(k resolvedKey) any {
	switch k.typ {
	case "integer":
		if n, err := strconv.ParseInt(k.value, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(k.value, 64); err == nil {
			return f // beyond int64, as JavaScript's parseInt would still give a number
		}
	case "boolean":
		return k.value == "true"
	}
	return k.value
}
