//go:build unix

package files

import (
	"os"
	"syscall"
)

// ServingSupported says whether internal_request_file and the file
// tools work here (see filetool_other.go).
const ServingSupported = true

// openNoFollow opens a path already checked to be a regular file. O_NOFOLLOW
// refuses a symlink swapped in since resolution, and O_NONBLOCK keeps a fifo
// swapped in from blocking the open.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
