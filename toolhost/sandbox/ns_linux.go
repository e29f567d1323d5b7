package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// privateShm gives the launcher's thread (and so the command) a mount
// namespace of its own with a fresh tmpfs on /dev/shm: what a call leaves
// there (POSIX shared memory, semaphores) is neither seen by another call
// nor kept after it, since the namespace ends with the call's last process.
// It needs CAP_SYS_ADMIN, which a root daemon's launcher has; elsewhere it
// reports errNoMountNS and /dev/shm stays the machine's (sandbox check
// says so).
func privateShm() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		if errors.Is(err, unix.EPERM) {
			return errNoMountNS
		}
		return fmt.Errorf("mount namespace: %w", err)
	}
	// Nothing mounted here may reach the daemon's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mount namespace: make mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount namespace: tmpfs on /dev/shm: %w", err)
	}
	return nil
}

// errNoMountNS: this launcher may not make a mount namespace.
var errNoMountNS = errors.New("no mount namespace without CAP_SYS_ADMIN")
