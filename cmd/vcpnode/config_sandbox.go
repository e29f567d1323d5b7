package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// sandboxHere is the check of the profiles in use against this machine,
// made by the daemon's own sandbox: what it cannot enforce is a warning
// ("not enforced", as in `vcpnode status`), or, with sandbox.require, the
// problem that keeps the daemon from starting. Unknown profiles and bad
// [sandbox] keys are the file's problems (config.Validate), not this one's.
func (a *app) sandboxHere(p config.Partial, path string, r *setupReport) {
	const what = "the sandbox profiles in use against this machine"
	if bad := p.Bad("sandbox"); bad != "" {
		r.skip(what, hasProblem(bad))
		return
	}
	opts, err := toolconfig.SandboxOptions(p.Config, path, a.getenv, a.geteuid())
	if err != nil {
		r.problems = append(r.problems, "sandbox: "+err.Error())
		return
	}
	// Limits go on the trees' own cgroups where the daemon can make them,
	// as it would; without, the sandbox falls back as the daemon's would.
	// Only cgroup mode is tried: the other modes change nothing here and
	// would make this process a subreaper.
	if trees, err := proctree.New(proctree.Options{Mode: proctree.ModeCgroup}); err == nil {
		defer trees.Close()
		opts.Trees = trees
	}
	sb, err := sandbox.New(opts)
	switch {
	case errors.Is(err, sandbox.ErrNotEnforced):
		r.problems = append(r.problems, err.Error())
		return
	case errors.Is(err, sandbox.ErrUnknownProfile):
		r.skip(what, "a profile named in the file is unknown (above)")
		return
	case err != nil:
		r.problems = append(r.problems, "sandbox: "+err.Error())
		return
	}
	if gaps := sb.Gaps(); len(gaps) > 0 {
		w := "not enforced on this machine for the profiles in use: " + strings.Join(gaps, ", ")
		if why := sb.Capabilities().Why; why != "" {
			w += " (" + why + ")"
		}
		r.warnings = append(r.warnings, w+"; sandbox.require = true would refuse to start")
	}
	// What `vcpnode status` says is not enforced, the gaps above aside.
	var machine []string
	for _, ne := range sb.Status().NotEnforced {
		if !slices.ContainsFunc(sb.Gaps(), func(g string) bool { return strings.HasPrefix(ne, g) }) {
			machine = append(machine, ne)
		}
	}
	if len(machine) > 0 {
		r.warnings = append(r.warnings, "not enforced on this machine (as vcpnode status says): "+strings.Join(machine, ", "))
	}
}
