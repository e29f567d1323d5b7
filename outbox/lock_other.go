//go:build !unix

package outbox

import "os"

// lockStateDir does nothing where flock is not available: plugins, and so
// the outbox, run only on Unix.
func lockStateDir(string) (*os.File, error) { return nil, nil }
