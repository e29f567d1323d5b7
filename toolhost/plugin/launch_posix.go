//go:build !windows

package plugin

import "syscall"

// sysAttr carries what the launch needs beyond argv (nothing on Unix).
func (l launch) sysAttr() *syscall.SysProcAttr { return nil }
