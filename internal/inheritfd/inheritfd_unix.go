//go:build unix

package inheritfd

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// closeOnExecListed marks close-on-exec every descriptor from first up that
// dir (/proc/self/fd, /dev/fd) lists. The one reading dir is closed again
// by then, and marking a descriptor that already has the flag, or is
// gone, changes nothing.
func closeOnExecListed(dir string, first int) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("list open files: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("list open files: %w", err)
	}
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd >= first {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
