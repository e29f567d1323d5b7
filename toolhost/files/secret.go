package files

import (
	"bytes"
	"path/filepath"
	"strings"
)

// secretDirs are directories whose whole contents are credentials.
var secretDirs = map[string]bool{
	".ssh":   true,
	".gnupg": true,
	".aws":   true,
}

// secretNames are file names that hold credentials wherever they are.
var secretNames = map[string]bool{
	"config.env":       true, // VCP plugin and server secrets
	".env":             true,
	"id_rsa":           true,
	"id_dsa":           true,
	"id_ecdsa":         true,
	"id_ecdsa_sk":      true,
	"id_ed25519":       true,
	"id_ed25519_sk":    true,
	".netrc":           true,
	".pgpass":          true,
	".git-credentials": true,
}

// secretReason says why p must not be served, or "" if its name is harmless.
// Names are compared without regard to case, as some file systems do.
func secretReason(p string) string {
	dir, name := filepath.Split(p)
	if reason := secretNameReason(name); reason != "" {
		return reason
	}
	for _, part := range strings.Split(filepath.ToSlash(dir), "/") {
		if secretDirs[strings.ToLower(part)] {
			return "files inside a " + part + " directory are never served"
		}
	}
	return ""
}

// hasPrivateKeyBlock reports whether data holds a PEM or OpenPGP private key
// armor line ("-----BEGIN … PRIVATE KEY…"), whatever the file is called.
func hasPrivateKeyBlock(data []byte) bool {
	const begin = "-----BEGIN "
	const maxLabel = 80
	for rest := data; ; {
		i := bytes.Index(rest, []byte(begin))
		if i < 0 {
			return false
		}
		rest = rest[i+len(begin):]
		line := rest
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if len(line) > maxLabel {
			line = line[:maxLabel]
		}
		if bytes.Contains(line, []byte("PRIVATE KEY")) {
			return true
		}
	}
}

// secretNameReason is secretReason for a bare file name.
func secretNameReason(name string) string {
	lower := strings.ToLower(name)
	switch {
	case secretNames[lower]:
		return "files named " + name + " hold secrets and are never served"
	case strings.HasPrefix(lower, ".env."):
		return ".env files hold secrets and are never served"
	case strings.HasSuffix(lower, ".ppk"):
		return "private key files are never served"
	}
	return ""
}
