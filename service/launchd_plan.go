package service

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vcpnode/vcpnode/service/launchd"
)

// launchdPlan is what a `service` command does under launchd. Whether the
// job is loaded is asked of launchctl now (a read-only question, also in a
// dry run), because bootstrap fails on a loaded job and bootout on an
// unloaded one.
func (h *Host) launchdPlan(ctx context.Context, l Layout, op Op, purge bool) (Plan, error) {
	domain := "gui/" + strconv.Itoa(h.EUID)
	if l.System {
		domain = "system"
	}
	target := domain + "/" + launchd.Label
	loaded := h.Commands.Run(ctx, io.Discard, []string{"launchctl", "print", target}) == nil
	load := Plan{runAction("launchctl", "enable", target), runAction("launchctl", "bootstrap", domain, l.UnitPath)}

	switch op {
	case Start:
		if loaded {
			return Plan{runAction("launchctl", "kickstart", target)}, nil
		}
		return load, nil
	case Stop:
		if !loaded {
			return Plan{noteAction("%s is not loaded: nothing to stop", target)}, nil
		}
		return Plan{runAction("launchctl", "bootout", target)}, nil
	case Status:
		return Plan{runAction("launchctl", "print", target)}, nil
	case Uninstall:
		var p Plan
		if loaded {
			p = append(p, runAction("launchctl", "bootout", target))
		}
		p = append(p, Action{kind: actRemove, path: l.UnitPath})
		return append(p, h.purgeActions(l, purge)...), nil
	}

	_, keyProblem, err := h.loadConfig(l.Config, l.NewConfig)
	if err != nil {
		return nil, err
	}
	job := launchd.Job{Binary: l.Binary, Config: l.Config, LogDir: l.LogDir, WorkingDir: l.StateDir}
	render := launchd.Agent
	if l.System {
		render = launchd.Daemon
	}
	content, err := render(job)
	if err != nil {
		return nil, err
	}
	old, _ := os.ReadFile(filepath.Join(h.FSRoot, l.UnitPath))
	changed := !bytes.Equal(old, content)

	p := Plan{mkdirAction(filepath.Dir(l.Config), l.configDirMode())}
	// Never replaces a config: the step only says it kept one.
	p = append(p, newConfigAction(l))
	p = append(p, mkdirAction(l.LogDir, 0o755))
	if l.System {
		p = append(p, mkdirAction(l.StateDir, 0o750))
	}
	p = append(p, mkdirAction(filepath.Dir(l.UnitPath), 0o755), writeAction(l.UnitPath, 0o644, content))
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
