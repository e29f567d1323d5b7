// Package toolconfig turns the config's tool settings into the options of
// the tool subsystems (sandbox, plugin host, dispatcher) and checks those
// settings by the subsystems' own rules. It is the composition root's
// translation: config stays a leaf that knows no tool package, and no tool
// package knows config.
package toolconfig

import (
	"fmt"
	"slices"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// Check finds the problems of cfg's tool settings that config cannot judge
// alone; pass it to config.Load, Parse and Validate.
func Check(cfg config.Config) []config.Problem {
	var ps problems
	checkWarm(&ps, cfg)
	checkPlaceholders(&ps, cfg)
	checkMCP(&ps, cfg)
	checkFiles(&ps, cfg)
	checkSandbox(&ps, cfg)
	return ps
}

// Warnings are cfg's warnings (config.Config.Warnings) and those of its
// tool settings: settings that work but probably not as meant.
func Warnings(cfg config.Config) []string {
	return append(cfg.Warnings(), preloadWarnings(cfg)...)
}

type problems []config.Problem

func (ps *problems) add(key, format string, args ...any) {
	*ps = append(*ps, config.Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

// Policy is the exposure policy toolhost applies, built from [node] and [tools.*].
func Policy(cfg config.Config) toolhost.Policy {
	p := toolhost.Policy{
		ExposedTools: slices.Clone(cfg.Node.ExposedTools),
		HiddenTools:  slices.Clone(cfg.Node.HiddenTools),
		Oversize:     cfg.Node.Oversize,
		RepeatLimit:  cfg.Node.RepeatLimit,
		RepeatWindow: cfg.Node.RepeatWindow.D(),
	}
	if len(cfg.Tools) > 0 {
		p.Tools = make(map[string]toolhost.ToolOverride, len(cfg.Tools))
		for name, t := range cfg.Tools {
			p.Tools[name] = toolhost.ToolOverride{
				Expose: t.Expose, Timeout: t.Timeout.D(), MaxConcurrent: t.MaxConcurrent,
				Approval: toolhost.ApprovalMode(t.Approval), ApprovalTimeout: t.ApprovalTimeout.D(),
				RepeatLimit: t.RepeatLimit,
			}
			for cmd, cc := range t.Commands {
				if cc.Expose != nil && !*cc.Expose {
					o := p.Tools[name]
					o.HiddenCommands = append(o.HiddenCommands, cmd)
					p.Tools[name] = o
				}
				if cc.Approval == "" {
					continue
				}
				o := p.Tools[name]
				if o.Commands == nil {
					o.Commands = map[string]toolhost.ApprovalMode{}
				}
				o.Commands[cmd] = toolhost.ApprovalMode(cc.Approval)
				p.Tools[name] = o
			}
		}
	}
	return p
}

// WarmConfig is which plugins keep warm interpreters: [plugins] warm and
// warm_pool, and each [tools.NAME] warm and preload.
func WarmConfig(cfg config.Config) plugin.WarmConfig {
	w := plugin.WarmConfig{Languages: cfg.Plugins.WarmLanguages(), Size: cfg.Plugins.WarmPool, Tools: map[string]bool{},
		Preload: map[string][]string{}}
	for name, t := range cfg.Tools {
		if t.Warm != nil {
			w.Tools[name] = *t.Warm
		}
		if len(t.Preload) > 0 {
			w.Preload[name] = t.Preload
		}
	}
	return w
}
