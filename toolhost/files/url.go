package files

import (
	"errors"
	"net/url"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// pathFromFileURL turns a file:// URL into a clean absolute local path. It
// follows Node's fileURLToPath on POSIX (which the server itself uses): no
// host other than localhost, no encoded '/', no drive letters, and dot
// segments are removed lexically as a URL parser would. It refuses what
// Node would silently drop (a query or fragment), because that would serve
// a different file than the one named.
func pathFromFileURL(raw string) (string, error) {
	if looksLikeWindowsPath(raw) {
		return "", windowsPathError(raw)
	}
	if !hasFileScheme(raw) {
		return "", fileErr(ErrBadFileURL, nil, "%s is not a file:// URL; only file:///absolute/path URLs are served", quotePath(raw))
	}
	if strings.ContainsAny(raw, "?#") {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s has a query or fragment; percent-encode '?' as %%3F and '#' as %%23 if they are part of the file name", quotePath(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		reason := err.Error()
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			reason = urlErr.Err.Error()
		}
		return "", fileErr(ErrBadFileURL, err, "malformed file URL %s: %s", quotePath(raw), reason)
	}
	if u.Opaque != "" {
		if hasDriveLetter(u.Opaque) {
			return "", windowsPathError(raw)
		}
		return "", fileErr(ErrBadFileURL, nil, "file URL %s is not absolute; use file:///absolute/path", quotePath(raw))
	}
	if hasDriveLetter(u.Host) {
		return "", windowsPathError(raw)
	}
	if u.User != nil || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s names another host; this node serves only its own files (file:///path or file://localhost/path)", quotePath(raw))
	}
	p := u.Path
	if strings.HasPrefix(p, "/") && hasDriveLetter(p[1:]) {
		return "", windowsPathError(raw)
	}
	if strings.HasPrefix(p, "//") || strings.Contains(p, `\`) {
		// A UNC share (file:////server/share) or an encoded backslash (%5C).
		return "", windowsPathError(raw)
	}
	if strings.Contains(strings.ToLower(u.EscapedPath()), "%2f") {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s contains an encoded '/' (%%2F), which cannot name a file", quotePath(raw))
	}
	if strings.ContainsRune(p, 0) {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s contains a NUL byte (%%00)", quotePath(raw))
	}
	if !strings.HasPrefix(p, "/") {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s names no file; use file:///absolute/path", quotePath(raw))
	}
	clean := path.Clean(p)
	if clean == "/" {
		return "", fileErr(ErrBadFileURL, nil, "file URL %s names the root directory, not a file", quotePath(raw))
	}
	return filepath.FromSlash(clean), nil
}

// hasFileScheme reports whether raw starts with "file:" in any letter case.
func hasFileScheme(raw string) bool {
	const scheme = "file:"
	return len(raw) >= len(scheme) && strings.EqualFold(raw[:len(scheme)], scheme)
}

// looksLikeWindowsPath catches what no POSIX file URL contains: a backslash,
// or a bare drive path such as C:/x handed over without any scheme.
func looksLikeWindowsPath(raw string) bool {
	return strings.Contains(raw, `\`) || hasDriveLetter(raw)
}

// hasDriveLetter reports whether s starts with a drive such as "C:" or the
// old "C|" form, alone or followed by a separator.
func hasDriveLetter(s string) bool {
	if len(s) < 2 {
		return false
	}
	letter := s[0]
	if !('a' <= letter && letter <= 'z' || 'A' <= letter && letter <= 'Z') {
		return false
	}
	if s[1] != ':' && s[1] != '|' {
		return false
	}
	return len(s) == 2 || s[2] == '/' || s[2] == '\\'
}

func windowsPathError(raw string) error {
	return fileErr(ErrWindowsPath, nil, "this node runs %s; Windows path %s cannot be served (use a file:///path URL for a file on this node)", runtime.GOOS, quotePath(raw))
}
