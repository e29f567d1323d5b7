//go:build !windows

package plugin

import (
	"os"
	"syscall"
)

// outputPipe is a pipe for a child's stdout or stderr: ours reads, theirs
// is the child's. Read deadlines work on ours.
func outputPipe() (ours, theirs *os.File, err error) { return os.Pipe() }

// sysAttr carries what the launch needs beyond argv (nothing on Unix).
func (l launch) sysAttr() *syscall.SysProcAttr { return nil }
