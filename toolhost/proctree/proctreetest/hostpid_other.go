//go:build !linux

package proctreetest

// HostPid: elsewhere a tool has no PID namespace of its own to report a
// pid from; 0 says so.
func HostPid(nsPid int, dir string) int { return 0 }

// HostPidMarked: see HostPid.
func HostPidMarked(nsPid int, mark string) int { return 0 }
