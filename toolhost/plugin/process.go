package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/outpipe"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// runSpec is everything needed to start one plugin's command; it is built
// by Scan and never changes.
type runSpec struct {
	name   string
	dir    string
	launch launch
	env    []string
	async  bool // posts its results to a callback URL
	// declared are the folders its manifest declares, as first seen.
	declared *sandbox.Declared
	// own are the variables of env its own files set (pluginEnv).
	own []string
}

// process is one running plugin command: the leader of its own process
// tree (proctree: a cgroup, or a walk of its descendants), with its stdout
// and stderr on pipes the host reads.
//
// Ownership: whoever calls Host.start must eventually call Host.finish
// (after which the leader is reaped and its pipes closed) and then
// Host.retire (which watches what the plugin left running). Stopping goes
// through Host.stop, at most once.
type process struct {
	spec *runSpec
	proc *os.Process
	pid  int            // also the process group id
	tree *proctree.Tree // every process the run started
	sb   *sandbox.Run   // the sandbox the run is confined in
	cb   *CallbackGrant // the run's callback URL, nil when it has none

	stdin          *os.File // our write end, nil when stdin is /dev/null
	stdout, stderr *os.File // our read ends

	stdinDone  chan struct{} // closed when the arguments were written (or could not be)
	stdoutDone chan struct{} // closed by the stdout reader when it returns
	stderrDone chan struct{} // closed by the stderr reader when it returns
	errOut     capture       // stderr, capped

	exited   chan struct{} // closed after the leader was reaped
	finished chan struct{} // closed by Host.finish: the run's output is in
	state    *os.ProcessState
	// drainOnExit ends the reads exitDrain after the leader exits, so a
	// descendant holding stdout cannot hold the call (not for asynchronous
	// plugins, whose workers may keep printing after the leader is gone).
	drainOnExit bool

	stopOnce sync.Once
	stopped  chan struct{} // closed when Host.stop has finished
	started  time.Time
}

// start runs spec with stdin as its standard input (nil: /dev/null), in a
// warm interpreter of spec's pool when one waits.
func (h *Host) start(spec *runSpec, stdin []byte, drainOnExit bool) (*process, error) {
	if stdin != nil {
		if p := h.takeWarm(spec); p != nil {
			p.started = time.Now()
			h.warmCalls.Add(1)
			go p.writeStdin(append([]byte{warmGo}, stdin...))
			return p, nil
		}
	}
	if err := h.track(); err != nil {
		return nil, err
	}
	p, err := h.spawn(spec, spec.launch, stdin != nil, nil)
	if err != nil {
		h.untrack()
		return nil, fmt.Errorf("start plugin %q: %w", spec.name, err)
	}
	h.started.Add(1)
	p.drainOnExit = drainOnExit
	p.errOut.max, p.errOut.tailMax = maxStderrBytes, stderrTailBytes
	go p.wait()
	go func() {
		defer close(p.stderrDone)
		_ = p.errOut.readFrom(p.stderr) // ends at EOF, a drain deadline or Close
	}()
	if stdin == nil {
		close(p.stdinDone)
	} else {
		go p.writeStdin(stdin)
	}
	return p, nil
}

// spawn starts l (spec's launch, or its warm form) with fresh pipes, as the
// leader of a new tree; extra, when set, is the child's fd 3.
func (h *Host) spawn(spec *runSpec, l launch, withStdin bool, extra *os.File) (_ *process, err error) {
	if h.trees == nil {
		return nil, ErrUnsupportedPlatform
	}
	var childFiles, ourFiles []*os.File
	defer func() {
		for _, f := range childFiles {
			f.Close() // the child has its copies; ours would keep the pipes open
		}
		if err != nil {
			for _, f := range ourFiles {
				f.Close()
			}
		}
	}()
	var stdinR, stdinW *os.File
	if withStdin {
		if stdinR, stdinW, err = os.Pipe(); err != nil {
			return nil, err
		}
		ourFiles = append(ourFiles, stdinW)
	} else if stdinR, err = os.Open(os.DevNull); err != nil {
		return nil, err
	}
	childFiles = append(childFiles, stdinR)
	outR, outW, err := outpipe.New()
	if err != nil {
		return nil, err
	}
	childFiles, ourFiles = append(childFiles, outW), append(ourFiles, outR)
	errR, errW, err := outpipe.New()
	if err != nil {
		return nil, err
	}
	childFiles, ourFiles = append(childFiles, errW), append(ourFiles, errR)

	files := []*os.File{stdinR, outW, errW}
	if extra != nil {
		files = append(files, extra)
	}
	env := spec.env
	var cb *CallbackGrant
	if spec.async && h.opts.Callbacks != nil {
		cb = h.opts.Callbacks.Grant(spec.name)
		env = withEnv(env, envCallbackURL, cb.URL())
		defer func() {
			if err != nil {
				cb.Revoke()
			}
		}()
	}
	sb, err := h.confine(spec, l, env)
	if err != nil {
		return nil, err
	}
	proc, tree, err := sb.StartProcess(h.trees, &os.ProcAttr{
		Dir:   spec.dir,
		Files: files,
		Sys:   l.sysAttr(),
	})
	if err != nil {
		sb.Close()
		return nil, sb.Explain(err)
	}
	return &process{
		spec:       spec,
		proc:       proc,
		pid:        proc.Pid,
		tree:       tree,
		sb:         sb,
		cb:         cb,
		stdin:      stdinW,
		stdout:     outR,
		stderr:     errR,
		stdinDone:  make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		exited:     make(chan struct{}),
		finished:   make(chan struct{}),
		stopped:    make(chan struct{}),
		started:    time.Now(),
	}, nil
}

// wait reaps the leader.
func (p *process) wait() {
	state, err := p.proc.Wait()
	if err == nil {
		p.state = state
	}
	if p.drainOnExit {
		p.setReadDeadlines(time.Now().Add(exitDrain))
	}
	close(p.exited)
}

// writeStdin writes the arguments and closes stdin. A plugin that never
// reads them is fine: the write fails with EPIPE once it exits, or is cut
// short when finish closes the pipe.
func (p *process) writeStdin(data []byte) {
	defer close(p.stdinDone)
	_, _ = p.stdin.Write(data)
	_ = p.stdin.Close()
}

func (p *process) setReadDeadlines(t time.Time) {
	_ = p.stdout.SetReadDeadline(t)
	_ = p.stderr.SetReadDeadline(t)
}

// exitText describes how the leader ended.
func (p *process) exitText() string {
	if p.state == nil {
		return "no exit status"
	}
	return p.state.String()
}

// succeeded reports a zero exit status.
func (p *process) succeeded() bool { return p.state != nil && p.state.Success() }

// stop ends every process of p's tree: SIGTERM, then SIGKILL to whatever is
// left after the kill grace (a member that ignores SIGTERM, a grandchild in
// a session of its own…). It returns once the leader is reaped, or a grace
// period after SIGKILL if the kernel has not let it go.
func (h *Host) stop(p *process, cause error) {
	p.stopOnce.Do(func() {
		defer close(p.stopped)
		if isClosed(p.exited) && !p.tree.Alive() {
			return
		}
		h.kills.Add(1)
		ev := h.log.Warn()
		if errors.Is(cause, ErrClosed) || errors.Is(cause, context.Canceled) {
			ev = h.log.Info() // shutdown or a cancelled call: expected
		}
		ev.Str("plugin", p.spec.name).Int("pid", p.pid).Dur("after", time.Since(p.started)).
			Str("reason", fmt.Sprint(cause)).Msg("stopping plugin process tree")
		p.tree.Signal(syscall.SIGTERM)

		graceDur := h.killGrace(cause)
		termWait := graceDur
		if !p.tree.Graceful() {
			termWait = 0 // no SIGTERM to wait on (Windows): kill at once
		}
		grace := time.NewTimer(termWait)
		defer grace.Stop()
		over := false
		for _, ch := range []chan struct{}{p.exited, p.stdoutDone, p.stderrDone} {
			if !over {
				select {
				case <-ch:
				case <-grace.C:
					over = true
				}
			}
		}
		// The leader is gone and the pipes are closed; other members
		// (output redirected elsewhere) still get the rest of the grace.
		if !over && p.tree.Alive() {
			tick := time.NewTicker(10 * time.Millisecond)
			for !over && p.tree.Alive() {
				select {
				case <-tick.C:
				case <-grace.C:
					over = true
				}
			}
			tick.Stop()
		}
		if p.tree.Alive() {
			p.tree.KillAll()
		}
		// A descendant may still hold our pipes until the kill lands.
		p.setReadDeadlines(time.Now().Add(exitDrain))
		select {
		case <-p.exited:
		case <-time.After(max(graceDur, exitDrain)):
			h.log.Error().Str("plugin", p.spec.name).Int("pid", p.pid).
				Msg("plugin process did not exit after SIGKILL (stuck in the kernel?); it will be reaped when it does")
		}
	})
	<-p.stopped
}

// finish waits for the leader to end and releases its pipes: the leader is
// reaped, the readers have returned and every pipe is closed. Call it once,
// as the owner, then retire.
func (h *Host) finish(p *process) {
	<-p.exited
	if p.stdin != nil {
		_ = p.stdin.Close() // unblocks a write to a stdin nobody reads
	}
	<-p.stdinDone
	p.setReadDeadlines(time.Now().Add(exitDrain))
	<-p.stdoutDone
	<-p.stderrDone
	_ = p.stdout.Close()
	_ = p.stderr.Close()
	close(p.finished)
}

// retire is the owner's last step, after finish. What an asynchronous run
// left running (its worker) is not killed when the call ends — the
// official hosts do not either — but watched: stopped at
// Options.AsyncMaxRuntime (counted from the run's start) or at Close; what
// a synchronous run left is being stopped already (runToEnd). The process
// counts as running until its whole tree has ended.
func (h *Host) retire(p *process) {
	if !p.tree.Alive() {
		p.release()
		h.untrack()
		return
	}
	go func() {
		defer h.untrack()
		defer p.release()
		if p.sb.Exceeded() {
			h.stop(p, sandbox.ErrLimit)
		}
		ctx, cancel := context.WithTimeoutCause(h.ctx, h.opts.AsyncMaxRuntime-time.Since(p.started), ErrMaxRuntime)
		defer cancel()
		tick := time.NewTicker(asyncPoll)
		defer tick.Stop()
		for p.tree.Alive() {
			select {
			case <-tick.C:
			case <-ctx.Done():
				h.stop(p, context.Cause(ctx))
				if p.tree.Alive() { // stopped earlier already: kill what is left
					p.tree.KillAll()
				}
				ctx = context.Background()        // and keep polling until it is gone,
				tick.Reset(10 * time.Millisecond) // closely: Close is waiting
			}
		}
		h.log.Debug().Str("plugin", p.spec.name).Int("pid", p.pid).Dur("duration", time.Since(p.started)).
			Msg("every process of the plugin run has ended")
	}()
}

// release forgets the run's tree and sandbox once no process is left.
func (p *process) release() {
	p.tree.Release()
	p.sb.Close()
	if p.cb != nil {
		p.cb.Revoke()
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// capture keeps the first max bytes read and counts the rest; with
// tailMax set it also keeps the last tailMax bytes past the cap, where a
// plugin's final JSON status may be. Memory stays at max + tailMax whatever
// the plugin prints.
type capture struct {
	max   int
	buf   []byte
	total int64

	tailMax int
	tail    []byte // ring of the last bytes past max
	tailPos int    // next write position once the ring is full
}

func (c *capture) truncated() bool { return c.total > int64(len(c.buf)) }

// summary is what the kept output says about a failure
// (toolhost.StderrSummary): its start, then the tail past the cap less its
// cut first line.
func (c *capture) summary() string {
	var s toolhost.StderrSummary
	_, _ = s.Write(c.buf)
	if tail := c.tailBytes(); len(tail) > 0 {
		_, _ = s.Write([]byte("\n"))
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			_, _ = s.Write(tail[i+1:])
		}
	}
	return s.String()
}

// tailBytes returns the kept bytes past the cap, oldest first.
func (c *capture) tailBytes() []byte {
	if len(c.tail) < c.tailMax || c.tailPos == 0 {
		return c.tail
	}
	out := make([]byte, 0, len(c.tail))
	return append(append(out, c.tail[c.tailPos:]...), c.tail[:c.tailPos]...)
}

// keepTail adds b, read past the cap, to the ring.
func (c *capture) keepTail(b []byte) {
	if c.tailMax <= 0 {
		return
	}
	if len(b) >= c.tailMax {
		c.tail = append(c.tail[:0], b[len(b)-c.tailMax:]...)
		c.tailPos = 0
		return
	}
	if room := c.tailMax - len(c.tail); room > 0 {
		n := min(room, len(b))
		c.tail = append(c.tail, b[:n]...)
		b = b[n:]
	}
	for len(b) > 0 {
		n := copy(c.tail[c.tailPos:], b)
		b = b[n:]
		c.tailPos = (c.tailPos + n) % c.tailMax
	}
}

// discardBuffers are for reading past the cap.
var discardBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readFrom reads r to its end: EOF gives nil, anything else (a drain
// deadline, a closed pipe) is returned. Past max, data is read and dropped
// (but for the tail) so the writer never blocks. A drain deadline on a
// pipe ends the wait for more, not the read of what the pipe holds: the
// leader's last writes are there, however far behind this reader fell.
func (c *capture) readFrom(r io.Reader) error {
	if f, ok := r.(*os.File); ok {
		r = outpipe.NewReader(f)
	}
	return c.readAll(r)
}

// readAll is readFrom on any reader.
func (c *capture) readAll(r io.Reader) error {
	var scratch *[]byte
	defer func() {
		if scratch != nil {
			discardBuffers.Put(scratch)
		}
	}()
	for {
		var dst []byte
		past := len(c.buf) >= c.max
		if !past {
			if len(c.buf) == cap(c.buf) {
				grown := make([]byte, len(c.buf), min(max(2*cap(c.buf), 512), c.max))
				copy(grown, c.buf)
				c.buf = grown
			}
			dst = c.buf[len(c.buf):cap(c.buf)]
		} else {
			if scratch == nil {
				scratch = discardBuffers.Get().(*[]byte)
			}
			dst = *scratch
		}
		n, err := r.Read(dst)
		if past {
			c.keepTail(dst[:n])
		} else {
			c.buf = c.buf[:len(c.buf)+n]
		}
		c.total += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
