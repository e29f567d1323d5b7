package plugin

import "syscall"

// sysAttr carries the verbatim command line of a cmd.exe launch.
func (l launch) sysAttr() *syscall.SysProcAttr {
	if l.cmdLine == "" {
		return nil
	}
	return &syscall.SysProcAttr{CmdLine: l.cmdLine}
}
