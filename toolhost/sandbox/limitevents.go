package sandbox

import (
	"errors"
	"strconv"
	"strings"
)

// ErrLimitNotApplied: a limit of the profile could not be put in force
// before the command started; the call is refused rather than run without it.
var ErrLimitNotApplied = errors.New("could not be applied")

// events are what the kernel counted against a run's limits, from its
// cgroup v1 groups (memory.oom_control, pids.events) or its tree's own
// cgroup v2 (memory.events, pids.events): the one reading both name.
type events struct {
	oomKills int64 // processes killed at the memory limit (oom_kill)
	oom      int64 // the memory limit reached with nothing left to reclaim
	forks    int64 // forks refused at the pids limit (pids.events max)
}

func (e events) plus(o events) events {
	return events{e.oomKills + o.oomKills, e.oom + o.oom, e.forks + o.forks}
}

// names says which of p's limits e shows reached.
func (e events) names(p Profile) []string {
	var out []string
	switch {
	case e.oomKills > 0:
		out = append(out, p.limitName("memory")+" reached: the kernel killed "+plural(e.oomKills, "process")+" (oom_kill)")
	case e.oom > 0:
		out = append(out, p.limitName("memory")+" reached")
	}
	if e.forks > 0 {
		out = append(out, p.limitName("pids")+" reached: "+plural(e.forks, "fork")+" refused (pids.events max)")
	}
	return out
}

// limitName is how errors name p's limit of controller: "memory limit 64MiB".
func (p Profile) limitName(controller string) string {
	switch controller {
	case "memory":
		return "memory limit " + FormatSize(p.Memory)
	case "pids":
		return "pids limit " + strconv.Itoa(p.Pids)
	case "cpu":
		return "cpu limit " + strconv.FormatFloat(p.CPU, 'g', -1, 64)
	}
	return controller + " limit"
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return strconv.FormatInt(n, 10) + " " + what + "es"
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}
