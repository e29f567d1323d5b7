package config

import (
	"fmt"
	"io/fs"
	"os"
)

// PermissionWarnings reports files that other users can read or change,
// naming each file and its mode: the config when it holds the key inline,
// the key file, and a config others may write (they could point the node at
// another server or open file roots). A file that cannot be inspected is
// left to the check that reads it.
func PermissionWarnings(configPath string, cfg Config) []string {
	var ws []string
	if fi, err := os.Stat(configPath); err == nil {
		perm := fi.Mode().Perm()
		if cfg.Hub.Key != "" && perm&0o044 != 0 {
			ws = append(ws, readableWarning(configPath, perm))
		}
		if perm&0o022 != 0 {
			ws = append(ws, fmt.Sprintf("%s is writable by %s (mode %04o): they could change what this node exposes; run chmod go-w %s",
				configPath, audience(perm<<1), perm, configPath)) // write bits onto read bits
		}
	}
	if cfg.Hub.KeyFile != "" {
		if fi, err := os.Stat(cfg.Hub.KeyFile); err == nil && fi.Mode().Perm()&0o044 != 0 {
			ws = append(ws, readableWarning(cfg.Hub.KeyFile, fi.Mode().Perm()))
		}
	}
	return ws
}

func readableWarning(path string, perm fs.FileMode) string {
	return fmt.Sprintf("%s holds the key and is readable by %s (mode %04o): run chmod 600 %s", path, audience(perm), perm, path)
}

// audience names who the read bits of perm (0o044) let in.
func audience(perm fs.FileMode) string {
	switch {
	case perm&0o040 != 0 && perm&0o004 != 0:
		return "its group and everyone"
	case perm&0o040 != 0:
		return "its group"
	}
	return "everyone"
}
