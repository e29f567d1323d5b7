//go:build !unix

package files

import (
	"errors"
	"os"
)

// ServingSupported says whether internal_request_file and the file
// tools (ReadFile, DirectoryTree, SearchFiles) work here. False: the URL
// rules and the race-safe open (no symlink followed out of a root) are
// written for POSIX; on Windows every such call answers that file access is
// not supported.
const ServingSupported = false

func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("file serving is not supported on this operating system")
}
