//go:build unix && !linux

package files

import (
	"os"
	"syscall"
)

// openNoFollow opens a path already checked to be a regular file. O_NOFOLLOW
// refuses a symlink swapped in since resolution, and O_NONBLOCK keeps a fifo
// swapped in from blocking the open.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openDirect is the one-walk open of open_linux.go; elsewhere every request
// takes the general path.
func openDirect(string, int64) (*directFile, bool) { return nil, false }
