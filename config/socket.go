package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// ControlSocketName is the control socket's file name in its directory.
const ControlSocketName = "vcpnode.sock"

// SystemControlSocket is where the system service listens (as root, or with
// systemd's RuntimeDirectory=vcpnode).
const SystemControlSocket = "/run/vcpnode/" + ControlSocketName

// DefaultControlSocket is the control socket's path when neither --socket nor
// [control] socket says: $RUNTIME_DIRECTORY/vcpnode.sock under systemd's
// RuntimeDirectory, /run/vcpnode/vcpnode.sock for root,
// $XDG_RUNTIME_DIR/vcpnode.sock for a user, and otherwise
// $TMPDIR/vcpnode-UID/vcpnode.sock (the directory is made 0700).
func DefaultControlSocket(getenv func(string) string, uid int) string {
	if dirs := getenv("RUNTIME_DIRECTORY"); dirs != "" {
		// systemd lists one directory per RuntimeDirectory= entry.
		if dir, _, _ := strings.Cut(dirs, ":"); filepath.IsAbs(dir) {
			return filepath.Join(dir, ControlSocketName)
		}
	}
	if uid == 0 {
		return SystemControlSocket
	}
	if dir := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return filepath.Join(dir, ControlSocketName)
		}
	}
	tmp := getenv("TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "vcpnode-"+strconv.Itoa(uid), ControlSocketName)
}

// ReadControlSocket reads only [control] socket from the config file at
// path, without checking the rest: a config with a mistake must not keep
// `vcpnode reload` (systemd's ExecReload) from reaching the daemon, which
// then reports every problem itself. "" means the file does not set it.
func ReadControlSocket(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("find the control socket: %w", err)
	}
	var doc struct {
		Control struct {
			Socket string `toml:"socket"`
		} `toml:"control"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("find the control socket in %s: %w", path, err)
	}
	return doc.Control.Socket, nil
}
