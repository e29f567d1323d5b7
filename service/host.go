package service

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vcpnode/vcpnode/config"
)

// Host is what the service commands touch outside the process: the OS, the
// user, service-manager commands and the file system.
type Host struct {
	GOOS     string
	EUID     int
	Commands CommandRunner
	// FSRoot prefixes every path read or written ("" = /); the paths
	// printed and written into files are as installed.
	FSRoot string
	Getenv func(string) string
	// ConfigChecks are the checks beyond config's own that a config must
	// pass before install uses it, as `config check` runs them.
	ConfigChecks []config.Check
}

// What ManagerProblem looks for: the directory sd_booted(3) tests, and
// the sockets a systemctl needs, PID 1's own (root) or the system bus; a
// user manager's are under $XDG_RUNTIME_DIR.
const (
	SystemdBootedDir = "/run/systemd/system"
	SystemdPrivate   = "/run/systemd/private"
	SystemBus        = "/run/dbus/system_bus_socket"
)

func (h *Host) exists(p string) bool {
	_, err := os.Stat(filepath.Join(h.FSRoot, p))
	return err == nil
}

// ManagerProblem says why the scope's service manager cannot take a
// service on this machine (nil: it can). It looks at the host's files
// only, so that `init` and `service install` can tell before they act.
func (h *Host) ManagerProblem(system bool) error {
	if h.GOOS != "linux" {
		return nil // launchd is always there on macOS
	}
	if fi, err := os.Stat(filepath.Join(h.FSRoot, SystemdBootedDir)); err != nil || !fi.IsDir() {
		return fmt.Errorf("systemd is not the init system here (no %s): run `vcpnode run` under the supervisor this machine has", SystemdBootedDir)
	}
	if system {
		if !h.exists(SystemdPrivate) && !h.exists(SystemBus) {
			return fmt.Errorf("systemctl cannot reach systemd (neither %s nor %s exists)", SystemdPrivate, SystemBus)
		}
		return nil
	}
	rt := h.Getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(rt) {
		return fmt.Errorf("no user session ($XDG_RUNTIME_DIR is not set): a user service needs systemd's user manager; log in (not su), or use --system as root")
	}
	if !h.exists(filepath.Join(rt, "bus")) && !h.exists(filepath.Join(rt, "systemd", "private")) {
		return fmt.Errorf("no user manager answers in %s (no bus socket): a user service needs `systemctl --user`; log in (not su), or use --system as root", rt)
	}
	return nil
}

// InstallProblem says why install cannot work here, before it changes
// anything: no service manager to take the service, or a binary where
// the system unit cannot see it (PrivateTmp= gives it its own /tmp).
func (h *Host) InstallProblem(l Layout) error {
	if err := h.ManagerProblem(l.System); err != nil {
		return err
	}
	if l.System && l.Manager == Systemd {
		for _, d := range []string{"/tmp", "/var/tmp"} {
			if strings.HasPrefix(l.Binary, d+"/") {
				return fmt.Errorf("%s is under %s, which the system unit replaces with a private one (PrivateTmp=yes), so it could not start: install the binary elsewhere (scripts/install.sh, or --binary /usr/local/bin/vcpnode)", l.Binary, d)
			}
		}
	}
	return nil
}

// hasUser says whether the host's /etc/passwd has a user of that name.
func (h *Host) hasUser(name string) bool {
	data, err := os.ReadFile(filepath.Join(h.FSRoot, "/etc/passwd"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, name+":") {
			return true
		}
	}
	return false
}

// loadConfig reads the config the service will use and says whether the
// service could start with it: a key it can read. It does not consult the
// environment, which the service will not have. content, when the config
// does not exist yet, is what the plan will write.
func (h *Host) loadConfig(path string, content []byte) (cfg config.Config, keyProblem error, err error) {
	data, err := os.ReadFile(filepath.Join(h.FSRoot, path))
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = content
	case err != nil:
		return cfg, nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err = config.Parse(data, path, h.ConfigChecks...)
	if err != nil {
		return cfg, nil, fmt.Errorf("%w\nfix the config first (vcpnode config check --config %s)", err, path)
	}
	probe := cfg
	if probe.Hub.KeyFile != "" {
		probe.Hub.KeyFile = filepath.Join(h.FSRoot, probe.Hub.KeyFile)
	}
	_, keyProblem = probe.Key(func(string) string { return "" })
	if keyProblem != nil && h.FSRoot != "" {
		keyProblem = errors.New(strings.ReplaceAll(keyProblem.Error(), h.FSRoot, ""))
	}
	return cfg, keyProblem, nil
}
