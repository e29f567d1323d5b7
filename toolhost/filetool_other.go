//go:build !unix

package toolhost

import (
	"errors"
	"os"
)

// fileServingSupported is false: the URL rules and the race-safe open are
// written for POSIX, and the daemon does not target other systems.
const fileServingSupported = false

func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("file serving is not supported on this operating system")
}
