//go:build linux

package files

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noSymlinks makes the kernel refuse (ELOOP) a path with a symlink in any
// component, not only the last, so the file opened is the one the path
// names now, whatever is swapped in between the checks and the open.
const noSymlinks = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// directUnavailable is set once openat2 turned out to be missing (a kernel
// before 5.6) or forbidden (a seccomp filter): every request then takes the
// general path.
var directUnavailable atomic.Bool

// openNoFollow opens a path already checked to be a symlink-free regular
// file. No symlink is followed anywhere in it, so one swapped in for the file
// or a directory above it since the check fails the open; O_NONBLOCK keeps a
// fifo swapped in from blocking it.
func openNoFollow(p string) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if fd, ok, err := openNoSymlinks(p, flags); ok {
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), p), nil
	}
	return os.OpenFile(p, flags, 0)
}

// openDirect opens requested, a clean absolute path already checked as
// resolve checks a symlink-free one, without walking it in user space: the
// open succeeds only if no component of the path is a symlink — so the path
// is its own symlink-free form and those checks hold for the file opened —
// and it is a regular file of at most maxBytes. As openServedFile does, the
// mode is checked before opening, so no device or fifo is opened, and again
// on the open descriptor. false: the caller takes the general path, which
// explains any refusal.
func openDirect(requested string, maxBytes int64) (*directFile, bool) {
	if directUnavailable.Load() {
		return nil, false
	}
	var before, opened unix.Stat_t
	if err := unix.Lstat(requested, &before); err != nil || !servable(&before, maxBytes) {
		return nil, false
	}
	fd, ok, err := openNoSymlinks(requested, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC)
	if !ok || err != nil {
		return nil, false
	}
	if err := unix.Fstat(fd, &opened); err != nil || opened.Dev != before.Dev || opened.Ino != before.Ino || !servable(&opened, maxBytes) {
		unix.Close(fd)
		return nil, false
	}
	return &directFile{fd: fd, name: requested, size: opened.Size}, true
}

// servable: a regular file of at most maxBytes.
func servable(st *unix.Stat_t, maxBytes int64) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size <= maxBytes
}

// openNoSymlinks opens p with flags through openat2, refusing a symlink in
// any component. ok is false when openat2 is missing or forbidden here
// (remembered in directUnavailable): the caller falls back.
func openNoSymlinks(p string, flags int) (fd int, ok bool, err error) {
	if directUnavailable.Load() {
		return -1, false, nil
	}
	how := &unix.OpenHow{Flags: uint64(flags), Resolve: noSymlinks}
	for {
		fd, err = unix.Openat2(unix.AT_FDCWD, p, how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil && unsupported(err) {
		directUnavailable.Store(true)
		return -1, false, nil
	}
	return fd, true, err
}

// unsupported: openat2 is missing or forbidden here, not failing for this path.
func unsupported(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
}
