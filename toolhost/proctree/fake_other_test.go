//go:build unix && !linux

package proctree

import (
	"errors"
	"syscall"
)

// escapeAttr: no cgroups here.
func escapeAttr(string) (*syscall.SysProcAttr, error) {
	return nil, errors.New("no cgroups on this system")
}
