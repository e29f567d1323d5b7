//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileGID is the group that owns fi's file.
func fileGID(fi os.FileInfo) int { return int(fi.Sys().(*syscall.Stat_t).Gid) }
