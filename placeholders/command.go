package placeholders

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DefaultCommandOutputLimit caps what a command placeholder may print: a
// placeholder ends up in every system prompt, so more is a mistake.
const DefaultCommandOutputLimit = 64 << 10

const (
	stderrLimit   = 4 << 10
	stderrExcerpt = 200
	// pipeWaitDelay bounds the wait for output after the shell has exited
	// or been killed, for a background process that still holds the pipe.
	pipeWaitDelay = time.Second
)

// Command is a placeholder fed by a shell command from the config: run with
// /bin/sh -c in its own process group, stdin from /dev/null, the trimmed
// stdout is the value. A command cut by its timeout fails (the previous
// value stays), unlike a static plugin, whose partial output counts.
type Command struct {
	Placeholder string   // the key it feeds, braces optional
	Line        string   // the shell command
	Dir         string   // working directory; "" = the daemon's
	Env         []string // environment; nil = the daemon's
	OutputLimit int      // bytes of stdout kept; 0 = DefaultCommandOutputLimit
}

// Name implements Source.
func (c *Command) Name() string { return "command " + c.Placeholder }

// Placeholders implements Source.
func (c *Command) Placeholders() []string { return []string{c.Placeholder} }

// Run implements Source. The whole process group is killed when ctx is done
// and once the shell has exited, so nothing it started outlives the run.
func (c *Command) Run(ctx context.Context) (Output, error) {
	limit := c.OutputLimit
	if limit <= 0 {
		limit = DefaultCommandOutputLimit
	}
	stdout := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: stderrLimit}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Line)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdout, cmd.Stderr = stdout, stderr // Stdin nil: /dev/null
	cmd.WaitDelay = pipeWaitDelay
	ownProcessGroup(cmd)

	err := cmd.Run()
	if cmd.Process != nil {
		killProcessGroup(cmd.Process.Pid)
	}
	out := Output{Text: stdout.String(), Truncated: stdout.Truncated()}
	if ctx.Err() != nil {
		return out, fmt.Errorf("the command did not finish: %w", context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: the shell exited fine, a background child kept
		// the pipe open and was killed; what was printed counts.
		return out, nil
	case errors.As(err, &exitErr):
		msg := excerpt(stderr.String())
		if msg == "" {
			msg = "no error output"
		}
		return out, fmt.Errorf("the command exited with status %d: %s", exitErr.ExitCode(), msg)
	default:
		return out, fmt.Errorf("run command %q: %w", c.Line, err)
	}
}

// excerpt is the start of a command's error output, on one line.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > stderrExcerpt {
		s = string(r[:stderrExcerpt]) + "…"
	}
	return s
}

// cappedBuffer keeps the first limit bytes written and drops the rest while
// still accepting them, so a chatty child is never blocked or killed by a
// broken pipe.
type cappedBuffer struct {
	mu        sync.Mutex
	limit     int
	buf       []byte
	truncated bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - len(b.buf)
	if len(p) > room {
		b.truncated = true
		b.buf = append(b.buf, p[:max(room, 0)]...)
	} else {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func (b *cappedBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.truncated
}
