package placeholders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/outpipe"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// DefaultCommandOutputLimit caps what a command placeholder may print: a
// placeholder ends up in every system prompt, so more is a mistake.
const DefaultCommandOutputLimit = 64 << 10

const (
	stderrLimit   = 4 << 10
	stderrExcerpt = 200
	// pipeWaitDelay bounds the wait for output after the shell has exited
	// or been killed, for a background process that still holds the pipe
	// (what the pipe holds then is read all the same).
	pipeWaitDelay = time.Second
)

// Command is a placeholder fed by a shell command from the config: run with
// /bin/sh -c, stdin from /dev/null, the trimmed stdout is the value. A
// command cut by its timeout fails (the previous value stays), unlike a
// static plugin, whose partial output counts.
type Command struct {
	Placeholder string   // the key it feeds, braces optional
	Line        string   // the shell command
	Dir         string   // working directory; "" = the daemon's
	Env         []string // environment; nil = the daemon's
	OutputLimit int      // bytes of stdout kept; 0 = DefaultCommandOutputLimit
	// Trees tracks every process the command starts (see package
	// proctree), so one that leaves the shell's session and process group
	// is still stopped. Nil: the shell leads a process group of its own and
	// only that group is stopped (the shell alone where there are no groups).
	Trees *proctree.Manager
	// Sandbox confines the command under Profile ("" is the sandbox's
	// profile for the placeholder's name), Dir its own folder; nil:
	// unconfined. It needs Trees.
	Sandbox *sandbox.Sandbox
	Profile string
}

// Name implements Source.
func (c *Command) Name() string { return "command " + c.Placeholder }

// Placeholders implements Source.
func (c *Command) Placeholders() []string { return []string{c.Placeholder} }

// Run implements Source. Every process of the run is killed when ctx is
// done and once the shell has exited, so nothing it started outlives the run.
func (c *Command) Run(ctx context.Context) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, fmt.Errorf("the command did not finish: %w", context.Cause(ctx))
	}
	limit := c.OutputLimit
	if limit <= 0 {
		limit = DefaultCommandOutputLimit
	}
	stdout := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: stderrLimit}
	run, err := c.confine()
	if err != nil {
		return Output{}, err
	}
	defer run.Close() // after endTree: the tree is gone by then
	outR, outW, err := outpipe.New()
	if err != nil {
		return Output{}, fmt.Errorf("run command %q: %w", c.Line, err)
	}
	defer outR.Close()
	errR, errW, err := outpipe.New()
	if err != nil {
		outW.Close()
		return Output{}, fmt.Errorf("run command %q: %w", c.Line, err)
	}
	defer errR.Close()
	proc, kill, end, err := c.start(run, outW, errW)
	outW.Close() // the shell has its copies; ours would keep the pipes open
	errW.Close()
	if err != nil {
		return Output{}, run.Explain(fmt.Errorf("run command %q: %w", c.Line, err))
	}
	defer end()
	var readers sync.WaitGroup
	readers.Add(2)
	for _, o := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		go func() {
			defer readers.Done()
			holdOutput()
			_, _ = io.Copy(o.w, outpipe.NewReader(o.r))
		}()
	}
	// ctx's end kills the whole tree, not the shell alone.
	stopWatch := context.AfterFunc(ctx, kill)
	state, err := proc.Wait()
	stopWatch()
	if err == nil && !state.Success() {
		err = &exec.ExitError{ProcessState: state} // as exec.Cmd's Wait says it
	}
	// A background process may hold the pipes: its output counts until
	// the drain deadline, and what the pipes hold then is read.
	deadline := time.Now().Add(pipeWaitDelay)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	drainSet(deadline)
	readers.Wait()

	out := Output{Text: stdout.String(), Truncated: stdout.Truncated()}
	if run.Exceeded() {
		kill() // a fork loop never ends by itself
		return out, run.Explain(err, []byte(stderr.String()))
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("the command did not finish: %w", context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &exitErr):
		msg := excerpt(stderr.String())
		if msg == "" {
			msg = "no error output"
		}
		return out, run.Explain(fmt.Errorf("the command exited with status %d: %s", exitErr.ExitCode(), msg), []byte(stderr.String()))
	default:
		return out, run.Explain(fmt.Errorf("run command %q: %w", c.Line, err))
	}
}

// Test hooks: holdOutput runs in each output reader before it reads,
// drainSet once the drain deadline is set.
var (
	holdOutput = func() {}
	drainSet   = func(time.Time) {}
)

// start starts the shell with stdin /dev/null and stdout, stderr on the
// given pipes: confined as run says, as the leader of a process tree when
// there are Trees, else of its own process group. kill kills every process
// of the run that can be found; end does too, and once the tree is empty
// releases it.
func (c *Command) start(run *sandbox.Run, stdout, stderr *os.File) (proc *os.Process, kill, end func(), err error) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, nil, nil, err
	}
	defer null.Close()
	attr := &os.ProcAttr{Dir: c.Dir, Env: run.Env, Files: []*os.File{null, stdout, stderr}}
	if c.Trees == nil {
		attr.Sys = groupAttr()
		if proc, err = os.StartProcess(run.Path, run.Args, attr); err != nil {
			return nil, nil, nil, err
		}
		kill = func() { killProcessGroup(proc) }
		return proc, kill, kill, nil
	}
	proc, tree, err := run.StartProcess(c.Trees, attr)
	if err != nil {
		return nil, nil, nil, err
	}
	return proc, tree.KillAll, func() { endTree(tree) }, nil
}

// confine wraps the shell for the command's sandbox profile.
func (c *Command) confine() (*sandbox.Run, error) {
	if c.Sandbox != nil && c.Trees == nil {
		// Landlock and limits are applied through the tree's start.
		return nil, errors.New("the sandbox needs process trees, which this system lacks")
	}
	env := c.Env
	if env == nil {
		env = os.Environ() // the run's environment replaces the command's
	}
	return c.Sandbox.Wrap(sandbox.Command{
		Tool: c.Placeholder, Kind: "placeholder command", Profile: c.Profile,
		Path: "/bin/sh", Args: []string{"/bin/sh", "-c", c.Line}, Env: env, Dir: c.Dir,
	})
}

// treeGoneWait bounds the wait for a killed tree to empty before it is
// released (a process stuck in the kernel is left to the next tree walk).
const treeGoneWait = 5 * time.Second

// endTree kills what is left of a run and releases its tree once it is
// empty: the shell has been reaped, its descendants may still run.
func endTree(t *proctree.Tree) {
	defer t.Release()
	_ = t.KillAndWait(treeGoneWait)
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
