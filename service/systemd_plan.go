package service

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vcpnode/vcpnode/service/systemd"
)

// Where the system service's user is declared (sysusers.d(5)).
const sysusersPath = "/etc/sysusers.d/vcpnode.conf"

// serviceUser is the system service's user, as the sysusers.d entry makes it.
const serviceUser = "vcpnode"

// createdUserMark ends the sysusers.d entry of an install that made the
// service's user, so that uninstall --purge removes only a user it made.
const createdUserMark = "# vcpnode service install created this user; service uninstall --purge removes it\n"

// systemdPlan is what a `service` command does under systemd.
func (h *Host) systemdPlan(l Layout, op Op, purge bool) (Plan, error) {
	systemctl := []string{"systemctl"}
	if !l.System {
		systemctl = append(systemctl, "--user")
	}
	sc := func(args ...string) []string { return append(append([]string{}, systemctl...), args...) }
	unit := systemd.UnitName

	switch op {
	case Start:
		return Plan{runAction(sc("start", unit)...)}, nil
	case Stop:
		return Plan{runAction(sc("stop", unit)...)}, nil
	case Status:
		return Plan{runAction(sc("status", "--no-pager", unit)...)}, nil
	case Uninstall:
		p := Plan{
			tolerantRun(sc("disable", "--now", unit)...),
			{kind: actRemove, path: l.UnitPath},
			runAction(sc("daemon-reload")...),
			tolerantRun(sc("reset-failed", unit)...),
		}
		return append(p, h.purgeActions(l, purge)...), nil
	}

	cfg, keyProblem, err := h.loadConfig(l.Config, l.NewConfig)
	if err != nil {
		return nil, err
	}
	u := systemd.Unit{Binary: l.Binary, Config: l.Config}
	render := systemd.User
	if l.System {
		render = systemd.System
		u.KeyFile = cfg.Hub.KeyFile // handed over as the credential vcp_key
	}
	content, err := render(u)
	if err != nil {
		return nil, err
	}

	var p Plan
	if l.System {
		sysusers := runAction("systemd-sysusers", sysusersPath)
		entry := systemd.Sysusers()
		if !h.hasUser(serviceUser) {
			sysusers.undo = []string{"userdel", serviceUser} // it makes the user
			entry = append(entry, createdUserMark...)
		}
		p = append(p,
			mkdirAction(filepath.Dir(sysusersPath), 0o755),
			writeAction(sysusersPath, 0o644, entry),
			sysusers,
		)
		if under := homeDirOf(l.Binary); under != "" {
			p = append(p, noteAction("%s is under %s, which the system unit makes read-only and may hide from the vcpnode user (ProtectHome=): install the binary elsewhere, e.g. with scripts/install.sh", l.Binary, under))
		}
	}
	p = append(p, mkdirAction(filepath.Dir(l.Config), l.configDirMode()))
	// Never replaces a config: the step only says it kept one.
	p = append(p, newConfigAction(l))
	if l.System {
		// The service's user reads the config through its group (init
		// writes it 0640 as root, before the group may exist).
		p = append(p, runAction("chgrp", serviceUser, l.Config))
	}
	p = append(p,
		mkdirAction(filepath.Dir(l.UnitPath), 0o755),
		writeAction(l.UnitPath, 0o644, content),
		runAction(sc("daemon-reload")...),
		runAction(sc("enable", unit)...),
	)
	if keyProblem != nil {
		p = append(p, notStartedNote(l, keyProblem, strings.Join(sc("start", unit), " ")))
		return p, nil
	}
	p = append(p, runAction(sc("restart", unit)...))
	if !l.System {
		p = append(p, noteAction("a user service runs while you are logged in; to keep it running without a session: loginctl enable-linger %s", userName(h.Getenv)))
	}
	return p, nil
}

// newConfigAction writes the config install makes when there is none;
// it never replaces one.
func newConfigAction(l Layout) Action {
	return Action{kind: actCreate, path: l.Config, mode: l.configMode(), content: l.NewConfig,
		summary: "config.example.toml with hub.key_file = " + l.DefaultKeyFile()}
}

// notStartedNote explains why install enabled the service but did not start it.
func notStartedNote(l Layout, why error, start string) Action {
	return noteAction("not started: %v\n  set the hub and key with: vcpnode init --config %s --hub URL --name NAME --force\n  (or write the key to %s, chmod 600), then: %s",
		why, l.Config, l.DefaultKeyFile(), start)
}

// purgeActions remove what install and init made, when asked to: the config,
// a key file beside it, the config directory if that leaves it empty, and the
// state directory. Anything else is kept and named.
func (h *Host) purgeActions(l Layout, purge bool) Plan {
	kept := []string{l.Config}
	if l.StateDir != "" {
		kept = append(kept, l.StateDir)
	}
	if !purge {
		return Plan{noteAction("kept %s (uninstall --purge removes them)", strings.Join(kept, " and "))}
	}
	keyFiles := []string{l.DefaultKeyFile()}
	if cfg, _, err := h.loadConfig(l.Config, nil); err == nil && cfg.Hub.KeyFile != "" && cfg.Hub.KeyFile != keyFiles[0] {
		if filepath.Dir(cfg.Hub.KeyFile) == filepath.Dir(l.Config) {
			keyFiles = append(keyFiles, cfg.Hub.KeyFile)
		}
	}
	p := Plan{{kind: actRemove, path: l.Config}}
	for _, k := range keyFiles {
		p = append(p, Action{kind: actRemove, path: k})
	}
	p = append(p, Action{kind: actRemoveEmpty, path: filepath.Dir(l.Config)})
	for _, d := range []string{l.StateDir, l.LogDir} {
		if d != "" {
			p = append(p, Action{kind: actRemoveAll, path: d})
		}
	}
	if l.System && l.Manager == Systemd {
		p = append(p, h.purgeUserActions()...)
	}
	return p
}

// purgeUserActions remove the sysusers.d entry install wrote and the
// service's user if that install made it; a user that was there before, or
// an entry someone edited, is kept and named.
func (h *Host) purgeUserActions() Plan {
	entry, err := os.ReadFile(filepath.Join(h.FSRoot, sysusersPath))
	if err != nil || !bytes.HasPrefix(entry, systemd.Sysusers()) {
		if err == nil {
			return Plan{noteAction("kept %s: it is not the entry install writes", sysusersPath)}
		}
		if h.hasUser(serviceUser) {
			return Plan{noteAction("kept the %s system user: install did not make it (userdel %s removes it)", serviceUser, serviceUser)}
		}
		return nil
	}
	p := Plan{{kind: actRemove, path: sysusersPath}}
	switch {
	case bytes.HasSuffix(entry, []byte(createdUserMark)) && h.hasUser(serviceUser):
		p = append(p, tolerantRun("userdel", serviceUser))
	case h.hasUser(serviceUser):
		p = append(p, noteAction("kept the %s system user: it existed before install (userdel %s removes it)", serviceUser, serviceUser))
	}
	return p
}

// homeDirOf returns /home or /root when p is under one of them.
func homeDirOf(p string) string {
	for _, d := range []string{"/home", "/root"} {
		if strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

// userName names the user for hints; it falls back to $(id -un).
func userName(getenv func(string) string) string {
	if u := getenv("USER"); u != "" && !strings.ContainsAny(u, " \t\n'\"$`\\") {
		return u
	}
	return fmt.Sprintf("%q", "$(id -un)")
}
