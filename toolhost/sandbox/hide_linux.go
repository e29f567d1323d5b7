package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Below Landlock ABI 9 a Unix socket is reached by its path whatever the
// grants: a tool connects to any socket its uid may write — as root,
// systemd's, the system bus's, a container runtime's, each of which runs
// commands outside the sandbox. Most live under /run. In the call's mount
// namespace the launcher covers those trees with an empty tmpfs and
// mounts back, as they are, the paths the call is granted there.

// hiddenTrees are the trees a call with namespaces does not see.
var hiddenTrees = []string{"/run"}

// hide covers each of p.Hide with an empty tmpfs, the grants inside it
// mounted back. It runs in the launcher's own mount namespace only (never
// the daemon's: the caller checks), before the capabilities are dropped.
// The grants' paths are canonical already (carve resolved them in the
// daemon): resolving them again here was a tenth of a millisecond of
// every call.
func (p *policy) hide() error {
	for _, tree := range p.Hide {
		real := canonical(tree)
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		whole, keep := p.keptIn(real)
		if whole {
			continue // granted as a whole, or with what holds it
		}
		if err := coverKeeping(real, keep); err != nil {
			return fmt.Errorf("mount namespace: hide %s: %w", real, err)
		}
	}
	return nil
}

// keptIn is what of the hidden tree (canonical) the call still sees over
// its grants (canonical already: carve): the whole tree when a grant holds
// it, else the grants inside it, each mounted back as it is.
func (p *policy) keptIn(tree string) (whole bool, keep []string) {
	for _, g := range p.Grants {
		switch {
		case within(tree, g.Path):
			return true, nil
		case within(g.Path, tree):
			keep = append(keep, g.Path)
		}
	}
	return false, keep
}

// shows reports whether path (canonical), inside the hidden tree
// (canonical), is seen by the call: the tree is granted whole, or path
// lies in a grant mounted back over the cover.
func (p *policy) shows(tree, path string) bool {
	whole, keep := p.keptIn(tree)
	return whole || slices.ContainsFunc(keep, func(k string) bool { return within(path, k) })
}

// coverKeeping mounts an empty tmpfs on dir and mounts keep (paths below
// dir) back on it, each a copy of its mount tree taken before the cover.
func coverKeeping(dir string, keep []string) error {
	slices.Sort(keep)
	type kept struct {
		path string
		fd   int
		dir  bool
	}
	var ks []kept
	defer func() {
		for _, k := range ks {
			unix.Close(k.fd)
		}
	}()
	for _, path := range keep {
		if len(ks) > 0 && within(path, ks[len(ks)-1].path) {
			continue // inside one already kept
		}
		fi, err := os.Stat(path)
		if err != nil {
			continue // gone: nothing to keep
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("keep %s: %w", path, err)
		}
		ks = append(ks, kept{path, fd, fi.IsDir()})
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=755"); err != nil {
		return err
	}
	for _, k := range ks {
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return err
		}
		var err error
		if k.dir {
			err = os.Mkdir(k.path, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(k.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("keep %s: %w", k.path, err)
		}
	}
	return nil
}
