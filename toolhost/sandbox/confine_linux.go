package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// confine fills r with the policy for p and a fresh temporary directory:
// in the call's private /dev/shm where it has its namespaces, else on the
// machine's disk (removed by Close).
func (s *Sandbox) confine(o *Options, p Profile, c Command, r *Run) error {
	tmp := privateTmp
	if !s.caps.PidNS || !shmOnMachine() {
		var err error
		if tmp, err = os.MkdirTemp(o.TempDir, "vcpnode-call-"); err != nil {
			return err
		}
		r.tmp = tmp
	}
	pol := &policy{Grants: o.grants(p, c, r.tmp), Strict: o.Require, NoFilter: !s.caps.Seccomp}
	if r.tmp == "" {
		// Made by the launcher in the call's own /dev/shm: not here to
		// carve, and nothing protected is inside.
		pol.Grants = append(pol.Grants, Grant{Path: privateTmp, Write: true})
	}
	if !p.Network {
		pol.NetDeny = true
	} else {
		pol.Ports = p.ConnectPorts
	}
	if err := pol.assembleFilter(); err != nil {
		return err
	}
	if s.caps.PidNS {
		pol.NS, r.userNS = &nsPlan{}, s.caps.UserNS
		pol.Hide = hiddenTrees
		if o.hide != nil {
			pol.Hide = o.hide
		}
	}
	var err error
	if r.groups, r.v2, err = s.limits.make(p, pol); err != nil {
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
	if !slices.ContainsFunc(r.Env, func(kv string) bool { return strings.HasPrefix(kv, "SHLVL=") }) {
		// bash -c with a socket for stdin (Node.js's child_process pipes)
		// reads ~/.bashrc, not granted, when it takes itself for the top
		// shell; under a login session, as under VCPToolBox, it is not.
		r.Env = append(r.Env, "SHLVL=1")
	}
	return nil
}

// prepare puts the run's cgroup v2 limits on tree's own cgroup before
// anything of the call runs there (a launcher started into it, or the
// launch sent to one waiting there), so that they hold from the command's
// first instruction; a limit that cannot be written refuses the call. The
// tree's counters stay readable to the Run until the tree goes.
func (r *Run) prepare(tree *proctree.Tree) error {
	if r.pol == nil || len(r.v2) == 0 {
		return nil
	}
	dir := tree.CgroupDir()
	files := slices.Sorted(maps.Keys(r.v2))
	for _, file := range files {
		if dir == "" {
			return r.notApplied(file, fmt.Errorf("the process tree has no cgroup of its own (tracked by %s)", tree.Mode()))
		}
		err := os.WriteFile(filepath.Join(dir, file), []byte(r.v2[file]), 0)
		if err != nil && !(optionalV2[file] && errors.Is(err, os.ErrNotExist)) {
			return r.notApplied(file, err)
		}
	}
	r.mu.Lock()
	r.treeDir = dir
	r.mu.Unlock()
	tree.BeforeRelease(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.treeDir == dir {
			r.seenV2, r.treeDir = treeEvents(dir, r.limits), ""
		}
	})
	return nil
}

// optionalV2 are the cgroup v2 files a kernel may lack while it holds the
// limit all the same: memory.swap.max without swap accounting.
var optionalV2 = map[string]bool{"memory.swap.max": true}

// notApplied is the error of a limit whose cgroup file could not be written.
func (r *Run) notApplied(file string, err error) error {
	controller, _, _ := strings.Cut(file, ".")
	return fmt.Errorf("%s %q: sandbox profile %q: %s %w: %w", r.kind, r.tool, r.Profile, r.limits.limitName(controller), ErrLimitNotApplied, err)
}

func removeTemp(dir string) { _ = os.RemoveAll(dir) }
