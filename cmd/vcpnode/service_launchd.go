package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vcpnode/vcpnode/service/launchd"
)

const launchdLabel = launchd.Label

// launchdPlan is what a `service` command does under launchd. Whether the
// job is loaded is asked of launchctl now (a read-only question, also in a
// dry run), because bootstrap fails on a loaded job and bootout on an
// unloaded one.
func (a *app) launchdPlan(ctx context.Context, h *host, l serviceLayout, op serviceOp, purge bool) (plan, error) {
	domain := "gui/" + strconv.Itoa(h.euid)
	if l.system {
		domain = "system"
	}
	target := domain + "/" + launchdLabel
	loaded := h.commands.Run(ctx, io.Discard, []string{"launchctl", "print", target}) == nil
	load := plan{runAction("launchctl", "enable", target), runAction("launchctl", "bootstrap", domain, l.unitPath)}

	switch op {
	case opStart:
		if loaded {
			return plan{runAction("launchctl", "kickstart", target)}, nil
		}
		return load, nil
	case opStop:
		if !loaded {
			return plan{noteAction("%s is not loaded: nothing to stop", target)}, nil
		}
		return plan{runAction("launchctl", "bootout", target)}, nil
	case opStatus:
		return plan{runAction("launchctl", "print", target)}, nil
	case opUninstall:
		var p plan
		if loaded {
			p = append(p, runAction("launchctl", "bootout", target))
		}
		p = append(p, action{kind: actRemove, path: l.unitPath})
		return append(p, purgeActions(h, l, purge)...), nil
	}

	newConfig, err := serviceConfigContent(l)
	if err != nil {
		return nil, err
	}
	_, keyProblem, err := loadServiceConfig(h.fsRoot, l.config, newConfig)
	if err != nil {
		return nil, err
	}
	job := launchd.Job{Binary: l.binary, Config: l.config, LogDir: l.logDir, WorkingDir: l.stateDir}
	render := launchd.Agent
	if l.system {
		render = launchd.Daemon
	}
	content, err := render(job)
	if err != nil {
		return nil, err
	}
	old, _ := os.ReadFile(filepath.Join(h.fsRoot, l.unitPath))
	changed := !bytes.Equal(old, content)

	p := plan{mkdirAction(filepath.Dir(l.config), l.configDirMode())}
	// Never replaces a config: the step only says it kept one.
	p = append(p, action{kind: actCreate, path: l.config, mode: l.configMode(), content: newConfig,
		summary: "config.example.toml with hub.key_file = " + l.defaultKeyFile()})
	p = append(p, mkdirAction(l.logDir, 0o755))
	if l.system {
		p = append(p, mkdirAction(l.stateDir, 0o750))
	}
	p = append(p, mkdirAction(filepath.Dir(l.unitPath), 0o755), writeAction(l.unitPath, 0o644, content))
	switch {
	case keyProblem != nil:
		p = append(p, notStartedNote(l, keyProblem, "vcpnode service start"))
	case loaded && !changed:
		p = append(p, runAction("launchctl", "kickstart", "-k", target)) // restart: a new binary may be in place
	case loaded:
		// launchd keeps the plist it loaded: unload it to read the new one.
		p = append(p, runAction("launchctl", "bootout", target))
		p = append(p, load...)
	default:
		p = append(p, load...)
	}
	return p, nil
}
