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

// directFile and openDirect exist on unix only (direct_unix.go).
type directFile struct{ size int64 }

func (*directFile) Read([]byte) (int, error) { return 0, errors.ErrUnsupported }
func (*directFile) Close() error             { return nil }
func (*directFile) osFile() (*os.File, error) {
	return nil, errors.ErrUnsupported
}

func openDirect(string, int64) (*directFile, bool) { return nil, false }
