//go:build !windows && !linux

package proctree

import "syscall"

// withCallerSys is the tree's attributes; nothing of the caller's is kept.
func withCallerSys(tree, _ *syscall.SysProcAttr) *syscall.SysProcAttr { return tree }
