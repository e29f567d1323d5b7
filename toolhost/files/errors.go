package files

import (
	"errors"
	"fmt"
	"io/fs"
)

// Reasons a file request fails; every error Invoke returns, except for a
// cancelled context, wraps one of them.
var (
	ErrFileServingDisabled = errors.New("file serving is disabled: [files] roots is empty")
	ErrBadFileURL          = errors.New("bad file URL")
	ErrWindowsPath         = errors.New("windows path on a non-windows node")
	ErrOutsideRoots        = errors.New("outside the served roots")
	ErrSecretFile          = errors.New("secret file")
	ErrNotRegularFile      = errors.New("not a regular file")
	ErrFileTooLarge        = errors.New("file too large")
	ErrFileEmpty           = errors.New("file is empty; the server treats an empty file as a failure")
	ErrFileUnreadable      = errors.New("file cannot be read")
)

// fileError is what Invoke returns for a request it cannot serve. Its text
// is written for the model and the server (it names only the requested path);
// Unwrap exposes the reason sentinel and any underlying cause to errors.Is.
type fileError struct {
	msg    string
	causes []error
}

func (e *fileError) Error() string   { return e.msg }
func (e *fileError) Unwrap() []error { return e.causes }

// fileErr builds a fileError of the given kind; cause may be nil.
func fileErr(kind, cause error, format string, args ...any) error {
	causes := []error{kind}
	if cause != nil {
		causes = append(causes, cause)
	}
	return &fileError{msg: fmt.Sprintf(format, args...), causes: causes}
}

// refusal builds an error naming only the requested path.
func refusal(kind error, requested, reason string) error {
	return fileErr(kind, nil, "cannot serve %s: %s", quotePath(requested), reason)
}

// unreadable reports a file-system failure inside the roots without the OS
// error's text, which may name the resolved path; the cause stays reachable
// through errors.Is.
func unreadable(requested string, err error) error {
	reason := "it cannot be read"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		reason = "no such file"
	case errors.Is(err, fs.ErrPermission):
		reason = "permission denied"
	}
	return fileErr(ErrFileUnreadable, err, "cannot serve %s: %s", quotePath(requested), reason)
}

// quotePath quotes a path for an error message, shortening absurd ones.
func quotePath(p string) string {
	const limit = 300
	if len(p) > limit {
		return fmt.Sprintf("%q…", p[:limit])
	}
	return fmt.Sprintf("%q", p)
}
