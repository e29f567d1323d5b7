//go:build !linux

package proctree

import (
	"os"
	"strconv"
)

// DaemonTag names this daemon in what it makes: its pid.
func DaemonTag() string { return strconv.Itoa(os.Getpid()) }
