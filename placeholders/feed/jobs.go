package feed

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// configJobs turns the [placeholders] table into refresher jobs; commands
// run their processes as trees of trees() (nil: process groups), confined
// by sb under their profiles (nil: unconfined). The config has been
// validated, so schedules parse.
func configJobs(c config.Config, trees func() *proctree.Manager, sb *sandbox.Sandbox) ([]placeholders.Job, error) {
	p := c.Placeholders
	var jobs []placeholders.Job
	for _, name := range slices.Sorted(maps.Keys(p.Values)) {
		v := p.Values[name]
		jobs = append(jobs, placeholders.Job{
			Source:      &placeholders.Fixed{Placeholder: name, Value: v},
			Fingerprint: "value\x00" + v,
		})
	}
	env := commandEnviron(os.Environ())
	for _, cmd := range p.Command {
		profile := toolconfig.SandboxProfile(c, config.PlaceholderSandboxKey(cmd.Name))
		job := placeholders.Job{
			Source: &placeholders.Command{Placeholder: cmd.Name, Line: cmd.Command, Env: env, Trees: trees(),
				Sandbox: sb, Profile: profile},
			Timeout: cmd.Timeout.D(),
		}
		if job.Timeout == 0 {
			job.Timeout = config.DefaultCommandTimeout
		}
		var err error
		switch {
		case cmd.Cron != "":
			job.Schedule, err = placeholders.ParseCron(cmd.Cron)
		case cmd.Every > 0:
			job.Schedule, err = placeholders.Every(cmd.Every.D())
		}
		if err != nil {
			return nil, fmt.Errorf("placeholders.command %q: %w", cmd.Name, err)
		}
		job.Fingerprint = fmt.Sprintf("command\x00%s\x00%s\x00%s\x00%s\x00%s", cmd.Command, cmd.Every, cmd.Cron, job.Timeout, profile)
		jobs = append(jobs, job)
	}
	if s := p.System; s.Enabled {
		every, _ := placeholders.Every(placeholders.SystemStatusInterval)
		jobs = append(jobs, placeholders.Job{
			Source:      &placeholders.SystemStatus{Placeholder: c.SystemPlaceholderName(), DiskPath: s.Disk},
			Schedule:    every,
			Timeout:     config.DefaultCommandTimeout,
			Fingerprint: "system\x00" + s.Disk,
		})
	}
	return jobs, nil
}

// commandEnviron is the daemon's environment without the hub key: a
// command's output goes to the server, so `env` must not be able to leak it.
func commandEnviron(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, config.EnvKey+"=")
	})
}
