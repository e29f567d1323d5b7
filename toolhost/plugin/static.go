package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// defaultStaticTimeout is VCPToolBox's (the official node uses 30 s).
const defaultStaticTimeout = 60 * time.Second

// StaticPlugin is a plugin of type static: run at start and on its cron,
// its output becomes the value of its system-prompt placeholders. The
// scheduling and the placeholder values belong to the caller.
type StaticPlugin struct {
	Name        string
	DisplayName string
	Description string
	// Placeholders are the declared capabilities.systemPromptPlaceholders
	// as written ("{{X}}" or "X"): a JSON map in the output is matched
	// against that spelling, as the official node matches it. May be empty
	// (a plugin run for its side effects).
	Placeholders []string
	// Cron is refreshIntervalCron as written (5 or 6 fields), or "" for a
	// single run at start.
	Cron string
	// Timeout bounds one run: communication.timeout, else entryPoint.timeout, else 60 s.
	Timeout time.Duration
	// Source is the manifest path.
	Source string

	host *Host
	run  *runSpec
}

// StaticOutput is what one run of a static plugin printed.
type StaticOutput struct {
	// Stdout is the output, untrimmed, capped at Options.MaxOutputBytes.
	Stdout string
	// Truncated is set when output past the cap was discarded.
	Truncated bool
	// TimedOut is set when the run was cut at Timeout; Stdout then holds
	// what was printed before, which the official hosts use as the value.
	TimedOut bool
	// ExitCode is the exit status, or -1 when killed by a signal.
	ExitCode int
	// Stderr is the start of stderr (at most 64 KiB), for logs.
	Stderr   string
	Duration time.Duration
}

func newStaticPlugin(h *Host, m *manifest, run *runSpec) *StaticPlugin {
	timeout := m.timeout
	if timeout == 0 {
		timeout = defaultStaticTimeout
	}
	return &StaticPlugin{
		Name:         m.name,
		DisplayName:  m.displayName,
		Description:  m.description,
		Placeholders: m.placeholders,
		Cron:         m.cron,
		Timeout:      timeout,
		Source:       m.path,
		host:         h,
		run:          run,
	}
}

// errStaticTimeout marks a run cut by its own timeout, which is not a failure.
var errStaticTimeout = errors.New("static plugin run reached its timeout")

// Run runs the plugin once with stdin on /dev/null and the plugin's
// environment. A run cut by Timeout returns its output with TimedOut and no
// error. A non-zero exit is an error quoting stderr (the output is still
// returned); so is ctx ending first.
func (p *StaticPlugin) Run(ctx context.Context) (StaticOutput, error) {
	h := p.host
	tctx, cancel := context.WithTimeoutCause(ctx, p.Timeout, errStaticTimeout)
	defer cancel()
	rctx, release := h.runContext(tctx)
	defer release()
	proc, out, stopped, err := h.runToEnd(rctx, p.run, nil)
	if err != nil {
		return StaticOutput{}, err
	}

	res := StaticOutput{
		Stdout:    string(out.buf),
		Truncated: out.truncated(),
		ExitCode:  -1,
		Stderr:    string(proc.errOut.buf),
		Duration:  time.Since(proc.started),
	}
	if proc.state != nil {
		res.ExitCode = proc.state.ExitCode()
	}
	cause := context.Cause(rctx)
	switch {
	case stopped && errors.Is(cause, errStaticTimeout):
		res.TimedOut = true
		return res, nil
	case stopped:
		return res, fmt.Errorf("static plugin %q stopped: %w", p.Name, cause)
	case !proc.succeeded():
		// What the profile refused, if it caused the failure, with the config that grants it.
		if q := proc.errOut.summary(); q != "" {
			return res, proc.sb.Explain(fmt.Errorf("static plugin %q %w (%s); stderr: %s", p.Name, ErrFailed, proc.exitText(), q), proc.errOut.buf, out.buf)
		}
		return res, proc.sb.Explain(fmt.Errorf("static plugin %q %w (%s)", p.Name, ErrFailed, proc.exitText()), out.buf)
	}
	return res, nil
}
