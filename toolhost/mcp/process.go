package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/outpipe"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// How long a stopping stdio server gets after its stdin is closed, and then
// after SIGTERM, before the next step.
const (
	stopGrace = 2 * time.Second
	// drainWait: after the server exits, how long its last messages may
	// take to be read before the wait for more ends, under a grandchild
	// holding stdout (what the pipe holds then is still read).
	drainWait = time.Second
	// stderrDoneWait bounds the wait for the stderr reader after the
	// server exited: past drainWait, the time to read what the pipe held.
	stderrDoneWait = 10 * drainWait
	// Longest stderr line kept for messages, and logged.
	stderrKeep = 300
	stderrLog  = 2000
	stderrHead = 16 << 10
	// treeGoneWait bounds the wait for the rest of a server's process tree
	// to end after SIGKILL (a process stuck in the kernel).
	treeGoneWait = 5 * time.Second
)

// proc is one run of a stdio server: the process, every process it
// started, its pipes, and what it said on stderr.
type proc struct {
	os *os.Process
	// tree is the server and everything it started, wherever it went
	// (setsid…); nil where process trees are unsupported: then the
	// server's process group is what is stopped (the server alone without
	// groups).
	tree *proctree.Tree
	// sb is the sandbox the server runs in (nil: unconfined), closed
	// once its tree is gone.
	sb      *sandbox.Run
	stdin   *os.File
	out     *lineFilter
	exited  chan struct{} // closed when the process was reaped
	gone    chan struct{} // closed when the rest of its tree was killed too
	waitErr error
	log     zerolog.Logger

	mu         sync.Mutex
	errs       toolhost.StderrSummary // its first error line and last lines
	headStderr []byte                 // the first lines, up to stderrHead bytes
	stderrDone chan struct{}
}

// startProc starts a stdio server with its own environment as the leader
// of a process tree of trees (nil: of its own process group), confined by
// o.Sandbox under c's profile. It never inherits the daemon's stdio.
func startProc(o Options, c ServerConfig, trees *proctree.Manager, log zerolog.Logger) (*proc, error) {
	run, err := confine(o, c, trees)
	if err != nil {
		return nil, err
	}
	p, err := startConfined(o, c, trees, run, log)
	if err != nil {
		run.Close()
		return nil, run.Explain(err)
	}
	return p, nil
}

// confine wraps c's command for its sandbox profile. A bare program name
// is looked up on the daemon's PATH first, as exec.Command does, so the
// profile can grant the program itself; a relative path is relative to
// Cwd, the server's own folder.
func confine(o Options, c ServerConfig, trees *proctree.Manager) (*sandbox.Run, error) {
	path := c.Command
	if filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", c.Command, err)
		}
		path = lp
	} else if !filepath.IsAbs(path) && c.Cwd != "" {
		path = filepath.Join(c.Cwd, path) // the same file, named so the profile grants it
	}
	if cmd := exec.Command(path); cmd.Err == nil {
		path = cmd.Path // with its extension on Windows, as a start of exec.Cmd finds it
	}
	if o.Sandbox != nil && trees == nil {
		// Landlock and limits are applied through the tree's start.
		return nil, fmt.Errorf("start %s: the sandbox needs process trees, which this system lacks", c.Command)
	}
	return o.Sandbox.Wrap(sandbox.Command{
		Tool: c.Name, Kind: "MCP server", Profile: c.Sandbox,
		Path: path, Args: append([]string{c.Command}, c.Args...), Env: serverEnv(o, c), Dir: c.Cwd,
	})
}

func startConfined(o Options, c ServerConfig, trees *proctree.Manager, run *sandbox.Run, log zerolog.Logger) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := outpipe.New()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := outpipe.New()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	attr := &os.ProcAttr{Dir: c.Cwd, Env: run.Env, Files: []*os.File{inR, outW, errW}}
	var osp *os.Process
	var tree *proctree.Tree
	if trees != nil {
		osp, tree, err = run.StartProcess(trees, attr)
	} else {
		attr.Sys = groupAttr()
		osp, err = os.StartProcess(run.Path, run.Args, attr)
	}
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", c.Command, err)
	}
	closeAll(inR, outW, errW) // the child's ends
	p := &proc{
		os:         osp,
		tree:       tree,
		sb:         run,
		stdin:      inW,
		exited:     make(chan struct{}),
		gone:       make(chan struct{}),
		stderrDone: make(chan struct{}),
		log:        log,
	}
	p.out = newLineFilter(outR, o.MaxMessageBytes, func(line []byte) {
		log.Warn().Str("stdout", clip(string(line), stderrKeep)).
			Msg("MCP server printed a line that is not JSON-RPC on stdout; ignored")
	})
	go p.readStderr(errR, log)
	go func() {
		state, err := osp.Wait()
		if err == nil && !state.Success() {
			err = &exec.ExitError{ProcessState: state} // as exec.Cmd's Wait says it
		}
		p.waitErr = err
		// What a process left holding stderr may say more; what the pipe
		// holds at this deadline is read all the same.
		deadline := time.Now().Add(drainWait)
		_ = errR.SetReadDeadline(deadline)
		stderrDrainSet(deadline)
		close(p.exited)
		// What the server started dies with it.
		p.killRest()
		p.sb.Close()
		close(p.gone)
		select {
		case <-p.out.eof:
		case <-time.After(drainWait):
			p.out.drain()
		}
	}()
	return p, nil
}

// killRest kills what is left of the server's processes once it was
// reaped, and waits (bounded) for them to end.
func (p *proc) killRest() {
	if p.tree == nil {
		signalGroup(p.os, syscall.SIGKILL)
		return
	}
	defer p.tree.Release()
	if err := p.tree.KillAndWait(treeGoneWait); err != nil {
		p.log.Error().Err(err).Int("pid", p.os.Pid).Msg("processes of an MCP server outlive it")
	}
}

// signal sends sig to every process of the server.
func (p *proc) signal(sig syscall.Signal) {
	switch {
	case p.tree == nil:
		signalGroup(p.os, sig)
	case sig == syscall.SIGKILL:
		p.tree.KillAll()
	default:
		p.tree.Signal(sig)
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Test hooks: holdStderr runs before the stderr reader reads,
// stderrDrainSet once the server exited and its drain deadline is set.
var (
	holdStderr     = func() {}
	stderrDrainSet = func(time.Time) {}
)

// readStderr logs the server's stderr at debug, line by line and
// truncated, and keeps for error messages its summary (first error line,
// last lines) and its head (where a refusal is looked for).
func (p *proc) readStderr(r *os.File, log zerolog.Logger) {
	defer close(p.stderrDone)
	defer r.Close()
	holdStderr()
	br := bufio.NewReaderSize(outpipe.NewReader(r), 4096)
	for {
		line, err := readLine(br, stderrLog)
		if s := string(bytes.TrimSpace(line)); s != "" {
			log.Debug().Str("stderr", clip(s, stderrLog)).Msg("MCP server stderr")
			p.mu.Lock()
			p.errs.Line(s)
			if len(p.headStderr) < stderrHead {
				p.headStderr = append(append(p.headStderr, clip(s, stderrLog)...), '\n')
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, keeping at most keep bytes of it.
func readLine(br *bufio.Reader, keep int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := keep - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// stderr summarises what the server wrote on stderr: its first error line
// and its last lines (runners such as npx end with a line of their own).
func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errs.String()
}

// stderrHeadBytes is the start of what the server wrote on stderr.
func (p *proc) stderrHeadBytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.headStderr)
}

// exitReason describes how the process ended, or "" while it runs.
func (p *proc) exitReason() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	// The last lines the server wrote before dying: the reader ends at
	// its drain deadline at the latest (the bound is for a pipe that took
	// no deadline).
	select {
	case <-p.stderrDone:
	case <-time.After(stderrDoneWait):
	}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		return "exited"
	case errors.As(p.waitErr, &ee):
		return ee.ProcessState.String() // "exit status 3", "signal: killed"
	default:
		return p.waitErr.Error()
	}
}

// stop ends the server: stdin closed (the MCP way to ask it to leave),
// SIGTERM to every process it started after a grace period, SIGKILL after
// another; once the server has exited, whatever it left is killed. It
// returns when all of them are gone, or ctx ended (after SIGKILL).
func (p *proc) stop(ctx context.Context) {
	p.stdin.Close()
	steps := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	if p.tree != nil && !p.tree.Graceful() {
		steps = steps[1:] // no SIGTERM here (Windows): waiting for one is no use
	}
	for i := 0; ; i++ {
		t := time.NewTimer(stopGrace)
		select {
		case <-p.gone:
			t.Stop()
			p.out.Close()
			return
		case <-ctx.Done():
			t.Stop()
			p.signal(syscall.SIGKILL)
			p.out.Close()
			return
		case <-t.C:
		}
		if i < len(steps) {
			p.signal(steps[i])
		}
	}
}

// errLineTooLong ends a session whose server sent a message above the cap:
// reading it would hold that much memory for one result.
var errLineTooLong = errors.New("sent a message larger than the limit")

// lineFilter is the server's stdout as the SDK reads it: one JSON message
// per line. Lines that are not JSON (a library printing to stdout) are
// skipped and reported instead of ending the session; a line above max
// ends it with a clear error.
type lineFilter struct {
	f       *os.File
	br      *bufio.Reader
	max     int
	garbage func([]byte)
	pending []byte
	err     error
	eof     chan struct{}

	closeOnce sync.Once
	mu        sync.Mutex
	readErr   error // the error that ended reading, other than EOF, close and drain
}

func newLineFilter(f *os.File, max int, garbage func([]byte)) *lineFilter {
	return &lineFilter{f: f, br: bufio.NewReaderSize(outpipe.NewReader(f), 64<<10), max: max, garbage: garbage, eof: make(chan struct{})}
}

func (l *lineFilter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		line, err := l.next()
		if err != nil {
			l.err = err
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
				l.mu.Lock()
				l.readErr = err
				l.mu.Unlock()
			}
			if errors.Is(err, io.EOF) {
				close(l.eof)
			}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if (line[0] == '{' || line[0] == '[') && json.Valid(line) {
			l.pending = append(line, '\n')
		} else {
			l.garbage(line)
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// next reads one line; a line above max is an error, so a server cannot
// make the node buffer an unbounded message.
func (l *lineFilter) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line)+len(chunk) > l.max {
			return nil, fmt.Errorf("%w of %d bytes on stdout", errLineTooLong, l.max)
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// failure is why reading stopped, when it was not the end of the stream.
func (l *lineFilter) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readErr
}

// drain ends the wait for more: the reader takes what the pipe holds
// now, then ends as at a close (which it falls back to).
func (l *lineFilter) drain() {
	if l.f.SetReadDeadline(time.Now()) != nil {
		l.Close()
	}
}

func (l *lineFilter) Close() error {
	l.closeOnce.Do(func() { l.f.Close() })
	return nil
}
