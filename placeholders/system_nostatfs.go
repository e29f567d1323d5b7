//go:build !(linux || darwin)

package placeholders

import (
	"errors"
	"fmt"
)

// diskSpace is not implemented here; the status leaves the disk out.
func diskSpace(path string) (free, total uint64, err error) {
	return 0, 0, fmt.Errorf("free space of %s: %w", path, errors.ErrUnsupported)
}
