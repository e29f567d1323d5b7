package direct

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/outpipe"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// Messages on fd 3 (host.js documents both directions).
type outMsg struct {
	T      string                     `json:"t"`
	ID     string                     `json:"id,omitempty"`
	Name   string                     `json:"name,omitempty"`
	Type   string                     `json:"type,omitempty"`
	Script string                     `json:"script,omitempty"`
	Config json.RawMessage            `json:"config,omitempty"`
	Args   map[string]json.RawMessage `json:"args,omitempty"`
	Ctx    json.RawMessage            `json:"ctx,omitempty"`
	Reason string                     `json:"reason,omitempty"`
}

type inMsg struct {
	T       string          `json:"t"`
	ID      string          `json:"id"`
	Value   json.RawMessage `json:"value"`
	Error   *string         `json:"error"`
	Exports []string        `json:"exports"`
	Stage   string          `json:"stage"`
	Code    string          `json:"code"`
	Level   string          `json:"level"`
	Msg     string          `json:"msg"`
}

// callReply is one call's answer from the host.
type callReply struct {
	value json.RawMessage
	err   *string
}

// Limits of what is read from a host.
const (
	// maxMessageBytes bounds one message on fd 3 (a result); a host that
	// sends more is killed.
	maxMessageBytes = 256 << 20
	// logLineBytes is how much of one stdout or stderr line is logged.
	logLineBytes = 512
	// logLinesPerSecond bounds the debug lines one host's output makes;
	// the rest are counted and reported.
	logLinesPerSecond = 50
	// treeGoneWait bounds the wait for a killed tree to empty.
	treeGoneWait = 5 * time.Second
)

// proc is one running Node.js host: the leader of its own process group,
// fd 3 a socket pair end, stdout and stderr pipes read into the log.
type proc struct {
	name  string
	pid   int
	os    *os.Process
	conn  net.Conn
	start time.Time
	log   zerolog.Logger

	wmu sync.Mutex // one writer at a time on conn

	mu      sync.Mutex
	pending map[string]chan callReply
	control chan inMsg // imported, ready, failed, bye: read by the starter
	gone    error      // why the host went away, once it did

	// done is closed when the leader is reaped and every reader returned;
	// exit describes how it ended.
	done chan struct{}
	exit string
	// killed is set before the host is killed on purpose, with why.
	killed    error
	killOnce  sync.Once
	readers   sync.WaitGroup
	outputs   []*os.File             // stdout and stderr read ends
	tree      *proctree.Tree         // the host and everything it started
	sb        *sandbox.Run           // the sandbox it runs in, closed once the tree is gone
	notice    string                 // see slot.notice
	reaped    func()                 // called before done closes
	errs      toolhost.StderrSummary // what stderr says, for failures (under mu)
	exitState *os.ProcessState
}

// spawn starts node (c: the plugin's name, profile, node's command line,
// environment and folder) with the host script as the leader of a new
// process tree (proctree: a cgroup, a walk of its descendants, or its
// process group), confined by sb under c's profile. reaped is called once
// the host and its tree are gone, just before done closes.
func spawn(trees *proctree.Manager, sb *sandbox.Sandbox, c sandbox.Command, log zerolog.Logger,
	reaped func()) (_ *proc, err error) {
	ch, err := newChannel()
	if err != nil {
		return nil, err
	}
	var childFiles []*os.File
	defer func() {
		for _, f := range childFiles {
			f.Close()
		}
		if err != nil {
			ch.close()
		}
	}()
	// The host script arrives on stdin ("node -"), which keeps it out of
	// the command line. Written from a goroutine: it fits a Unix pipe's
	// buffer, but not Windows' 4 KiB default; the write ends when node has
	// read it, or fails once our copy of the read end is closed and the host
	// is gone (or never started).
	scriptR, scriptW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	childFiles = append(childFiles, scriptR)
	go func() {
		_, _ = scriptW.WriteString(hostScript)
		scriptW.Close()
	}()
	outR, outW, err := outpipe.New()
	if err != nil {
		return nil, err
	}
	childFiles = append(childFiles, outW)
	errR, errW, err := outpipe.New()
	if err != nil {
		outR.Close()
		return nil, err
	}
	childFiles = append(childFiles, errW)
	files := []*os.File{scriptR, outW, errW}
	if f := ch.childFile(); f != nil {
		files = append(files, f)
	}
	c.Env = slices.Concat(c.Env, ch.childEnv())
	run, err := sb.Wrap(c)
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	osp, tree, err := run.StartProcess(trees, &os.ProcAttr{Dir: c.Dir, Files: files})
	if err != nil {
		run.Close()
		outR.Close()
		errR.Close()
		return nil, run.Explain(err)
	}
	conn, err := ch.connect(tree.Alive)
	if err != nil {
		tree.KillAll()
		_, _ = osp.Wait()
		tree.Release()
		run.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("channel to the Node.js host: %w", run.Explain(err))
	}
	p := &proc{
		name:    c.Tool,
		pid:     osp.Pid,
		os:      osp,
		conn:    conn,
		start:   time.Now(),
		log:     log,
		pending: make(map[string]chan callReply),
		control: make(chan inMsg, 8),
		done:    make(chan struct{}),
		outputs: []*os.File{outR, errR},
		tree:    tree,
		sb:      run,
		reaped:  reaped,
	}
	p.readers.Add(3)
	go p.logOutput(outR, "stdout")
	go p.logOutput(errR, "stderr")
	go p.readMessages()
	go p.wait()
	return p, nil
}

// send writes one message; it fails once the host is gone.
func (p *proc) send(m outMsg) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // ends the line with \n
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("encode %s message: %w", m.T, err)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := p.conn.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write to the Node.js host: %w", err)
	}
	return nil
}

// readMessages dispatches the host's messages until fd 3 closes, or its
// drain deadline after the host's exit: the messages the channel holds
// then (a result sent just before the exit) are still read.
func (p *proc) readMessages() {
	defer p.readers.Done()
	var r io.Reader = p.conn
	if c, ok := p.conn.(outpipe.Conn); ok {
		r = outpipe.NewReader(c)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxMessageBytes)
	var ended error
	for sc.Scan() {
		var m inMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			p.log.Warn().Err(err).Msg("unreadable message from the Node.js host")
			continue
		}
		switch m.T {
		case "result":
			p.mu.Lock()
			ch := p.pending[m.ID]
			delete(p.pending, m.ID)
			p.mu.Unlock()
			if ch != nil {
				ch <- callReply{value: m.Value, err: m.Error}
			}
		case "log":
			ev := p.log.Debug()
			switch m.Level {
			case "warn":
				ev = p.log.Warn()
			case "error":
				ev = p.log.Error()
			case "info":
				ev = p.log.Info()
			}
			ev.Str("from", "host").Msg(m.Msg)
		default:
			select {
			case p.control <- m:
			default: // nobody is starting the host any more
			}
		}
	}
	ended = sc.Err()
	if errors.Is(ended, bufio.ErrTooLong) {
		p.kill(fmt.Errorf("the Node.js host sent a message over %d MiB", maxMessageBytes>>20))
	}
	// fd 3 closed: the host exited or is about to; nothing more will come.
	p.mu.Lock()
	if p.gone == nil {
		p.gone = errors.New("the Node.js host closed its channel")
	}
	p.mu.Unlock()
}

// wait reaps the leader, kills what is left of its group, and closes done
// once every reader returned.
func (p *proc) wait() {
	state, err := p.os.Wait()
	// What the plugin started dies with it, wherever it went (setsid…).
	if p.tree.Alive() {
		p.tree.KillAll()
		deadline := time.Now().Add(treeGoneWait)
		for p.tree.Alive() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling the kernel; nothing to wait on
		}
		if p.tree.Alive() {
			p.log.Error().Int("pid", p.pid).Msg("processes of a direct plugin still alive after SIGKILL")
		}
	}
	p.tree.Release()
	p.sb.Close()
	// A descendant that left the group may hold the pipes: stop waiting
	// for more soon (what they hold then is still read, see logOutput).
	drain := time.Now().Add(time.Second)
	_ = p.conn.SetReadDeadline(drain)
	for _, f := range p.outputs {
		_ = f.SetReadDeadline(drain)
	}
	p.readers.Wait()
	_ = p.conn.Close()
	for _, f := range p.outputs {
		_ = f.Close()
	}
	p.mu.Lock()
	switch {
	case p.killed != nil:
		p.gone = p.killed
	case err != nil:
		p.gone = fmt.Errorf("the Node.js host could not be waited for: %w", err)
	default:
		p.exitState = state
		// Names the profile, and a limit the tree reached or what the
		// sandbox refused (stderr's summary).
		p.gone = p.sb.Explain(fmt.Errorf("the Node.js host exited (%s)", state), []byte(p.errs.String()))
	}
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	p.reaped()
	close(p.done)
}

// reason says why the host is gone (valid once done is closed).
func (p *proc) reason() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

// kill ends the host's whole process tree at once (SIGKILL): used when it
// is stuck or misbehaves, and after a graceful shutdown ran out of time.
func (p *proc) kill(why error) {
	p.killOnce.Do(func() {
		p.doom(why)
		p.tree.KillAll()
	})
}

// doom marks the host as being killed, with why (the first why stays):
// from here it is dying, and new calls wait for the next host.
func (p *proc) doom(why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed == nil {
		p.killed = why
	}
}

// dying reports whether the host is gone or being killed: new calls wait
// for the next one.
func (p *proc) dying() bool {
	if isClosed(p.done) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed != nil
}

// register makes the channel id's reply arrives on; false once the host is gone.
func (p *proc) register(id string) (chan callReply, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		return nil, false
	}
	ch := make(chan callReply, 1)
	p.pending[id] = ch
	return ch, true
}

func (p *proc) unregister(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != nil {
		delete(p.pending, id)
	}
}

// logOutput logs the plugin's stdout or stderr at debug, each line cut to
// logLineBytes and at most logLinesPerSecond lines a second; a flood is
// read and dropped so the plugin never blocks on a full pipe. The drain
// deadline after the host's exit ends the wait for more, not the read of
// what the pipe holds: the host's last stderr lines explain its exit.
func (p *proc) logOutput(r *os.File, stream string) {
	defer p.readers.Done()
	br := bufio.NewReaderSize(outpipe.NewReader(r), 32<<10)
	window := time.Now()
	lines, dropped := 0, 0
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			now := time.Now()
			if now.Sub(window) >= time.Second {
				if dropped > 0 {
					p.log.Debug().Str("stream", stream).Int("lines", dropped).Msg("plugin output lines not logged (too many)")
				}
				window, lines, dropped = now, 0, 0
			}
			if stream == "stderr" {
				p.mu.Lock()
				p.errs.Line(clipLine(line))
				p.mu.Unlock()
			}
			if lines < logLinesPerSecond {
				lines++
				if e := p.log.Debug(); e.Enabled() {
					e.Str("stream", stream).Msg(clipLine(line))
				}
			} else {
				dropped++
			}
			// A line longer than the buffer: skip the rest of it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				p.log.Debug().Err(err).Str("stream", stream).Msg("reading plugin output")
			}
			return
		}
	}
}

func clipLine(b []byte) string {
	b = bytes.TrimRight(b, "\r\n")
	if len(b) > logLineBytes {
		return string(bytes.ToValidUTF8(b[:logLineBytes], []byte("\uFFFD"))) + "…(" + strconv.Itoa(len(b)) + " bytes)"
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
