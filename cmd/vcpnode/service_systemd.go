package main

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
func (a *app) systemdPlan(h *host, l serviceLayout, op serviceOp, purge bool) (plan, error) {
	systemctl := []string{"systemctl"}
	if !l.system {
		systemctl = append(systemctl, "--user")
	}
	sc := func(args ...string) []string { return append(append([]string{}, systemctl...), args...) }
	unit := systemd.UnitName

	switch op {
	case opStart:
		return plan{runAction(sc("start", unit)...)}, nil
	case opStop:
		return plan{runAction(sc("stop", unit)...)}, nil
	case opStatus:
		return plan{runAction(sc("status", "--no-pager", unit)...)}, nil
	case opUninstall:
		p := plan{
			tolerantRun(sc("disable", "--now", unit)...),
			{kind: actRemove, path: l.unitPath},
			runAction(sc("daemon-reload")...),
			tolerantRun(sc("reset-failed", unit)...),
		}
		return append(p, purgeActions(h, l, purge)...), nil
	}

	newConfig, err := serviceConfigContent(l)
	if err != nil {
		return nil, err
	}
	cfg, keyProblem, err := loadServiceConfig(h.fsRoot, l.config, newConfig)
	if err != nil {
		return nil, err
	}
	u := systemd.Unit{Binary: l.binary, Config: l.config}
	render := systemd.User
	if l.system {
		render = systemd.System
		u.KeyFile = cfg.Hub.KeyFile // handed over as the credential vcp_key
	}
	content, err := render(u)
	if err != nil {
		return nil, err
	}

	var p plan
	if l.system {
		sysusers := runAction("systemd-sysusers", sysusersPath)
		entry := systemd.Sysusers()
		if !hasUser(h, serviceUser) {
			sysusers.undo = []string{"userdel", serviceUser} // it makes the user
			entry = append(entry, createdUserMark...)
		}
		p = append(p,
			mkdirAction(filepath.Dir(sysusersPath), 0o755),
			writeAction(sysusersPath, 0o644, entry),
			sysusers,
		)
		if under := homeDirOf(l.binary); under != "" {
			p = append(p, noteAction("%s is under %s, which the system unit makes read-only and may hide from the vcpnode user (ProtectHome=): install the binary elsewhere, e.g. with scripts/install.sh", l.binary, under))
		}
	}
	p = append(p, mkdirAction(filepath.Dir(l.config), l.configDirMode()))
	// Never replaces a config: the step only says it kept one.
	p = append(p, action{kind: actCreate, path: l.config, mode: l.configMode(), content: newConfig,
		summary: "config.example.toml with hub.key_file = " + l.defaultKeyFile()})
	if l.system {
		// The service's user reads the config through its group (init
		// writes it 0640 as root, before the group may exist).
		p = append(p, runAction("chgrp", serviceUser, l.config))
	}
	p = append(p,
		mkdirAction(filepath.Dir(l.unitPath), 0o755),
		writeAction(l.unitPath, 0o644, content),
		runAction(sc("daemon-reload")...),
		runAction(sc("enable", unit)...),
	)
	if keyProblem != nil {
		p = append(p, notStartedNote(l, keyProblem, strings.Join(sc("start", unit), " ")))
		return p, nil
	}
	p = append(p, runAction(sc("restart", unit)...))
	if !l.system {
		p = append(p, noteAction("a user service runs while you are logged in; to keep it running without a session: loginctl enable-linger %s", userName(a.getenv)))
	}
	return p, nil
}

// hasUser says whether the host's /etc/passwd has a user of that name.
func hasUser(h *host, name string) bool {
	data, err := os.ReadFile(filepath.Join(h.fsRoot, "/etc/passwd"))
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

// installProblem says why install cannot work here, before it changes
// anything: no service manager to take the service, or a binary where
// the system unit cannot see it (PrivateTmp= gives it its own /tmp).
func (a *app) installProblem(h *host, l serviceLayout) error {
	if err := a.serviceManagerProblem(h, l.system); err != nil {
		return err
	}
	if l.system && l.manager == managerSystemd {
		for _, d := range []string{"/tmp", "/var/tmp"} {
			if strings.HasPrefix(l.binary, d+"/") {
				return fmt.Errorf("%s is under %s, which the system unit replaces with a private one (PrivateTmp=yes), so it could not start: install the binary elsewhere (scripts/install.sh, or --binary /usr/local/bin/vcpnode)", l.binary, d)
			}
		}
	}
	return nil
}

// notStartedNote explains why install enabled the service but did not start it.
func notStartedNote(l serviceLayout, why error, start string) action {
	return noteAction("not started: %v\n  set the hub and key with: vcpnode init --config %s --hub URL --name NAME --force\n  (or write the key to %s, chmod 600), then: %s",
		why, l.config, l.defaultKeyFile(), start)
}

// purgeActions remove what install and init made, when asked to: the config,
// a key file beside it, the config directory if that leaves it empty, and the
// state directory. Anything else is kept and named.
func purgeActions(h *host, l serviceLayout, purge bool) plan {
	kept := []string{l.config}
	if l.stateDir != "" {
		kept = append(kept, l.stateDir)
	}
	if !purge {
		return plan{noteAction("kept %s (uninstall --purge removes them)", strings.Join(kept, " and "))}
	}
	keyFiles := []string{l.defaultKeyFile()}
	if cfg, _, err := loadServiceConfig(h.fsRoot, l.config, nil); err == nil && cfg.Hub.KeyFile != "" && cfg.Hub.KeyFile != keyFiles[0] {
		if filepath.Dir(cfg.Hub.KeyFile) == filepath.Dir(l.config) {
			keyFiles = append(keyFiles, cfg.Hub.KeyFile)
		}
	}
	p := plan{{kind: actRemove, path: l.config}}
	for _, k := range keyFiles {
		p = append(p, action{kind: actRemove, path: k})
	}
	p = append(p, action{kind: actRemoveEmpty, path: filepath.Dir(l.config)})
	for _, d := range []string{l.stateDir, l.logDir} {
		if d != "" {
			p = append(p, action{kind: actRemoveAll, path: d})
		}
	}
	if l.system && l.manager == managerSystemd {
		p = append(p, purgeUserActions(h)...)
	}
	return p
}

// purgeUserActions remove the sysusers.d entry install wrote and the
// service's user if that install made it; a user that was there before, or
// an entry someone edited, is kept and named.
func purgeUserActions(h *host) plan {
	entry, err := os.ReadFile(filepath.Join(h.fsRoot, sysusersPath))
	if err != nil || !bytes.HasPrefix(entry, systemd.Sysusers()) {
		if err == nil {
			return plan{noteAction("kept %s: it is not the entry install writes", sysusersPath)}
		}
		if hasUser(h, serviceUser) {
			return plan{noteAction("kept the %s system user: install did not make it (userdel %s removes it)", serviceUser, serviceUser)}
		}
		return nil
	}
	p := plan{{kind: actRemove, path: sysusersPath}}
	switch {
	case bytes.HasSuffix(entry, []byte(createdUserMark)) && hasUser(h, serviceUser):
		p = append(p, tolerantRun("userdel", serviceUser))
	case hasUser(h, serviceUser):
		p = append(p, noteAction("kept the %s system user: it existed before install (userdel %s removes it)", serviceUser, serviceUser))
	}
	return p
}

// serviceConfigContent is the config install writes when there is none:
// the example, with hub.key_file pointing beside it.
func serviceConfigContent(l serviceLayout) ([]byte, error) {
	text, err := exampleConfig(configValues{KeyFile: l.defaultKeyFile()},
		"Written by `vcpnode service install` from config.example.toml. Set hub.url and\n"+
			"hub.name, put the key in hub.key_file (chmod 600), then check it with:\n"+
			"  vcpnode config check --config "+l.config)
	return []byte(text), err
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
