package files

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Access applies internal_request_file's rules (the [files] roots, the
// deny list, the secret names, symlinks resolved and checked against the
// roots) for other tools that read files, so that every tool of the node
// answers the same path the same way.
type Access struct{ t *fileTool }

// NewAccess resolves the roots and deny list as NewTool does.
func NewAccess(opts Options) *Access {
	return &Access{t: NewTool(opts).(*fileTool)}
}

// Ready reports why no file can be reached (serving unsupported, no roots
// configured, none resolvable), or nil.
func (a *Access) Ready() error {
	switch {
	case !ServingSupported:
		return fileErr(ErrFileServingDisabled, nil, "file access is not supported on %s", runtime.GOOS)
	case !a.t.configured:
		return fileErr(ErrFileServingDisabled, nil, "file access is disabled: [files] roots is empty, so this node reads no files")
	case len(a.t.roots) == 0:
		return fileErr(ErrFileServingDisabled, nil, "file access is unavailable: none of the configured [files] roots could be resolved; the node's owner should check its config")
	}
	return nil
}

// Roots returns the resolved, symlink-free roots in configured order.
func (a *Access) Roots() []string { return slices.Clone(a.t.roots) }

// Resolve checks an absolute path as internal_request_file does and returns
// its symlink-free form. Errors name only requested and wrap ErrOutsideRoots,
// ErrSecretFile or ErrFileUnreadable.
func (a *Access) Resolve(requested string) (string, error) {
	if !filepath.IsAbs(requested) {
		return "", fileErr(ErrOutsideRoots, nil, "cannot serve %s: not an absolute path", quotePath(requested))
	}
	return a.t.resolve(filepath.Clean(requested))
}

// RootOf returns the root that holds the symlink-free path p, or "".
func (a *Access) RootOf(p string) string {
	for _, root := range a.t.roots {
		if within(root, p) {
			return root
		}
	}
	return ""
}

// Withheld reports whether the entry name of directory dir (symlink-free,
// itself not withheld) is on the deny list (the node's own config and key
// files) or is, by its name, a secret; a directory is withheld when
// everything in it would be (.ssh, .gnupg…). Walkers use it to leave such
// entries out without resolving or re-checking the whole path of each one.
func (a *Access) Withheld(dir, name string, isDir bool) bool {
	if secretNameReason(name) != "" || (isDir && secretDirs[strings.ToLower(name)]) {
		return true
	}
	for _, d := range a.t.deny {
		// Most deny entries are nowhere near dir; skip the join for them.
		if strings.HasPrefix(d, dir) && within(d, filepath.Join(dir, name)) {
			return true
		}
		if within(d, dir) {
			return true
		}
	}
	return false
}

// SecretReason says why the file at path p must never be read, judging by
// its name and its directories' names, or "" if nothing in the name says so.
func SecretReason(p string) string { return secretReason(p) }

// HasPrivateKeyBlock reports whether data holds a PEM or OpenPGP private key.
func HasPrivateKeyBlock(data []byte) bool { return hasPrivateKeyBlock(data) }

// OpenNoFollow opens a path already checked to be a regular file, refusing a
// symlink or fifo swapped in since the check.
func OpenNoFollow(p string) (*os.File, error) { return openNoFollow(p) }

// Refusal builds an error of internal_request_file's form, "cannot serve
// PATH: reason", wrapping kind, for a check done outside this package.
func Refusal(kind error, requested, reason string) error {
	return refusal(kind, requested, reason)
}

// Unreadable reports a file-system failure on requested without the OS
// error's text, wrapping ErrFileUnreadable and err.
func Unreadable(requested string, err error) error { return unreadable(requested, err) }

// LocalPath turns a path argument into a local path: a file:// URL is
// converted as internal_request_file converts it, a path with a Windows
// drive letter is refused with the same explanation (wrapping
// ErrWindowsPath), and anything else is returned as it is.
func LocalPath(p string) (string, error) {
	switch {
	case hasFileScheme(p):
		return pathFromFileURL(p)
	case hasDriveLetter(p):
		return "", windowsPathError(p)
	}
	return p, nil
}
