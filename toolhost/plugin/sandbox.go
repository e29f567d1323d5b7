package plugin

import (
	"slices"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// confine wraps l, spec's command (or its warm form), for the plugin's sandbox profile
// (Options.Sandbox; nil runs it unconfined). The caller starts it with the
// Run's StartProcess, and closes the Run once the process tree has ended.
func (h *Host) confine(spec *runSpec, l launch, env []string) (*sandbox.Run, error) {
	return h.opts.Sandbox.Wrap(sandbox.Command{
		Tool: spec.name, Kind: "plugin",
		Path: l.path, Args: l.argv, Env: append(slices.Clip(env), l.env...), Dir: spec.dir,
		Read: l.read, Declared: spec.declared, Own: spec.own,
	})
}
