//go:build linux

package proctree

import "syscall"

// withCallerSys is the tree's attributes with the caller's namespaces: a
// user namespace to start in, its id maps and ambient capabilities (the
// sandbox launcher of an ordinary user's daemon).
func withCallerSys(tree, caller *syscall.SysProcAttr) *syscall.SysProcAttr {
	if caller != nil {
		tree.Cloneflags |= caller.Cloneflags
		tree.UidMappings, tree.GidMappings = caller.UidMappings, caller.GidMappings
		tree.GidMappingsEnableSetgroups = caller.GidMappingsEnableSetgroups
		tree.AmbientCaps = caller.AmbientCaps
	}
	return tree
}
