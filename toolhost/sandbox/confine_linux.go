package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// confine fills r with the policy for p and a fresh temporary directory.
func (s *Sandbox) confine(o *Options, p Profile, c Command, r *Run) error {
	tmp, err := os.MkdirTemp(o.TempDir, "vcpnode-call-")
	if err != nil {
		return err
	}
	r.tmp = tmp
	pol := &policy{Grants: o.grants(p, c, tmp), Strict: o.Require, NoFilter: !s.caps.Seccomp}
	if !p.Network {
		pol.NetDeny = true
	} else {
		pol.Ports = p.ConnectPorts
	}
	if err := pol.assembleFilters(); err != nil {
		return err
	}
	if s.caps.PidNS {
		pol.NS, r.userNS = &nsPlan{}, s.caps.UserNS
		pol.Hide = hiddenTrees
		if o.hide != nil {
			pol.Hide = o.hide
		}
	}
	if r.groups, err = s.limits.make(p, pol); err != nil {
		return err
	}
	r.pol = pol
	if !o.ColdLaunch {
		r.launchers = s.launchers
	}
	r.Env = withTemp(c.Env, tmp)
	if len(pol.Ports) > 0 && !slices.ContainsFunc(r.Env, func(kv string) bool { return strings.HasPrefix(kv, "RES_OPTIONS=") }) {
		// UDP is refused under connect_ports: glibc resolves names over TCP
		// (port 53, when the profile lists it) with use-vc.
		r.Env = append(r.Env, "RES_OPTIONS=use-vc")
	}
	return nil
}

// started applies what can only be applied to the started tree: limits on
// its own cgroup v2 (the launcher applied the rest).
func (r *Run) started(pid int, tree *proctree.Tree) {
	if r.pol == nil {
		return
	}
	if dir := tree.CgroupDir(); dir != "" {
		for file, value := range r.pol.V2 {
			_ = os.WriteFile(filepath.Join(dir, file), []byte(value), 0)
		}
	}
}

func removeTemp(dir string) { _ = os.RemoveAll(dir) }
