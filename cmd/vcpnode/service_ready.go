package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// Sockets a systemctl needs: PID 1's own (root) or the system bus, and a
// user manager's (under $XDG_RUNTIME_DIR). sd_booted(3) tests the first dir.
const (
	systemdBootedDir = "/run/systemd/system"
	systemdPrivate   = "/run/systemd/private"
	systemBus        = "/run/dbus/system_bus_socket"
)

// serviceManagerProblem says why the scope's service manager cannot take
// a service on this machine (nil: it can). It looks at the host's files
// only, so that `init` and `service install` can tell before they act.
func (a *app) serviceManagerProblem(h *host, system bool) error {
	if h.goos != "linux" {
		return nil // launchd is always there on macOS
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(h.fsRoot, p))
		return err == nil
	}
	if fi, err := os.Stat(filepath.Join(h.fsRoot, systemdBootedDir)); err != nil || !fi.IsDir() {
		return fmt.Errorf("systemd is not the init system here (no %s): run `vcpnode run` under the supervisor this machine has", systemdBootedDir)
	}
	if system {
		if !exists(systemdPrivate) && !exists(systemBus) {
			return fmt.Errorf("systemctl cannot reach systemd (neither %s nor %s exists)", systemdPrivate, systemBus)
		}
		return nil
	}
	rt := a.getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(rt) {
		return fmt.Errorf("no user session ($XDG_RUNTIME_DIR is not set): a user service needs systemd's user manager; log in (not su), or use --system as root")
	}
	if !exists(filepath.Join(rt, "bus")) && !exists(filepath.Join(rt, "systemd", "private")) {
		return fmt.Errorf("no user manager answers in %s (no bus socket): a user service needs `systemctl --user`; log in (not su), or use --system as root", rt)
	}
	return nil
}
