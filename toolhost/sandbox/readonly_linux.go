package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Landlock has no right for a file's mode, times, owner or extended
// attributes: a tool could chmod, touch or setxattr any file its uid owns
// wherever it may look the path up — for a root daemon's tool (uid 0)
// every root file of the machine (`chmod 666 /etc/shadow`, `chmod -x
// /bin/*`), for an ordinary user's the user's own (`chmod 644
// ~/.ssh/id_ed25519`, the node's key). A read-only mount refuses them all
// (EROFS), as systemd's ProtectSystem=strict and bubblewrap's --ro-bind
// do: in the call's mount namespace every mount is made read-only but the
// call's writable grants, which get a writable copy of their mount tree.

// readOnlyBut makes every mount of the launcher's own mount namespace
// read-only (never the daemon's: the caller checks), after hide and before
// the capabilities are dropped, but for the writable grants' directories
// and regular files (devices, FIFOs and sockets are written and connected
// to on a read-only mount as on any). The working directory is entered
// again, so that it is the writable copy.
func (p *policy) readOnlyBut() error {
	var keep []string
	for _, g := range p.Grants { // canonical already (carve)
		if !g.Write {
			continue
		}
		if fi, err := os.Lstat(g.Path); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			keep = append(keep, g.Path)
		}
	}
	slices.Sort(keep)
	var fds []int
	var paths []string
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, path := range keep {
		if len(paths) > 0 && within(path, paths[len(paths)-1]) {
			continue // inside one already kept
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("mount namespace: keep %s writable: %w", path, err)
		}
		fds, paths = append(fds, fd), append(paths, path)
	}
	err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	if errors.Is(err, unix.ENOSYS) && !p.Strict {
		return nil // Linux < 5.12: sandbox check says what is not held
	}
	if err != nil {
		return fmt.Errorf("mount namespace: read-only mounts: %w", err)
	}
	for i, fd := range fds {
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, paths[i], unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount namespace: keep %s writable: %w", paths[i], err)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		_ = unix.Chdir(wd)
	}
	return nil
}
