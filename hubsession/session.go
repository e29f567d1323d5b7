package hubsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/internal/inflight"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

const outboxDepth = 256

var (
	errSessionEnded     = errors.New("the connection this message belonged to has ended")
	errRestartRequested = errors.New("reconnect requested")
	// errReaderPanicked ends a session whose reader panicked.
	errReaderPanicked = errors.New("the connection's reader failed")
)

// session is one WebSocket connection to the hub. It owns conn: readLoop is
// the only reader and run is the only writer of data frames (control frames
// may go out from any goroutine). conn keeps the liveness (hubconn).
type session struct {
	e    *Engine
	st   *Settings // the config this connection was made with
	conn *hubconn.Conn
	log  zerolog.Logger
	out  chan outFrame
	done chan struct{} // closed when run stops writing: send must not block after that

	calls       inflight.Counter // read and not yet answered (session_calls.go)
	origin      *toolhost.Origin // groups this connection's calls in the dispatcher
	callCtx     context.Context
	cancelCalls context.CancelCauseFunc
	// registered is set by run once the connect state is on the wire
	// (register_tools too, unless held back: toolsSent); the reconnect loop
	// reads it after run returns.
	registered bool
	toolsSent  bool
	scratch    []byte // readFrame's first-chunk buffer, reader goroutine only
	// readEnded is set once the reader has failed: frames still waiting
	// for the decoder belong to a dead connection and are dropped.
	readEnded atomic.Bool
	// bridgeOn is set before the reader may hand bridge frames on: the
	// bridge knows this connection (ServerTools.Connected).
	bridgeOn atomic.Bool
}

func newSession(e *Engine, conn *hubconn.Conn, st *Settings) *session {
	callCtx, cancelCalls := context.WithCancelCause(context.Background())
	return &session{
		e:           e,
		st:          st,
		conn:        conn,
		log:         e.log,
		out:         make(chan outFrame, outboxDepth),
		done:        make(chan struct{}),
		callCtx:     callCtx,
		cancelCalls: cancelCalls,
		origin:      toolhost.NewOrigin(),
	}
}

// run serves the connection until it fails or, after ctx is cancelled,
// until drained is closed (all in-flight results sent); then it closes the
// connection with a close frame and returns nil.
func (s *session) run(ctx context.Context, drained <-chan struct{}) error {
	defer s.conn.Close()

	// A restart asked of the previous session as it ended is served by this
	// one: it registers the tools as they are now. Only hub settings changed
	// by a reload that slipped in while dialing make it give way at once.
	select {
	case <-s.e.restart:
	default:
	}
	if !SameHub(s.st, s.e.host.Settings()) {
		s.e.Restart()
	}

	readerDone := make(chan error, 1)
	go func() {
		err := errReaderPanicked
		defer func() { readerDone <- err }()
		s.e.host.Guard("session reader", func() { err = s.readLoop() })
	}()
	// Whatever ends the session, the reader must have returned before run does.
	stop := func(err error) error {
		close(s.done)
		if s.bridgeOn.Load() {
			s.e.bridge.Disconnected() // its calls fail now, never hang
		}
		s.conn.Close()
		readErr := <-readerDone
		s.endCalls() // session_calls.go
		s.discardQueued()
		// A write fails with ErrCloseSent when the reader has already closed
		// the connection (a frame over the read limit, say): its error is
		// the cause worth reporting.
		if errors.Is(err, hubconn.ErrCloseSent) && readErr != nil {
			return readErr
		}
		return err
	}

	s.e.host.Connected(ctx, s.st)
	if err := s.sendState(); err != nil {
		return stop(err)
	}
	s.registered = true
	if s.toolsSent {
		s.e.state.update(func(st *connState) { st.Registered = true })
	} else {
		s.log.Info().Msg("connected with the tools held back until `vcpnode register` ([node] register = false)")
	}
	ph := s.e.feed.NewPush(s.st.Config.Placeholders.PushInterval.D(), s.writePlaceholders, s.log)
	defer ph.Stop()
	if err := ph.SendSnapshot(); err != nil {
		return stop(err)
	}
	s.startOutbox()
	if err := s.sendOutbox(); err != nil { // callbacks stored while disconnected
		return stop(err)
	}
	if s.e.bridge != nil {
		s.bridgeOn.Store(true)
		s.e.bridge.Connected(s.sendMessage) // asks for the server's tools
	}

	ping := time.NewTicker(s.st.Config.Hub.PingInterval.D())
	defer ping.Stop()
	rereg := s.e.timings.Reregister
	reregTimer := time.NewTimer(time.Hour)
	reregTimer.Stop()
	startRereg := func() {
		if len(rereg) > 0 {
			reregTimer.Reset(rereg[0])
		}
	}
	if s.toolsSent {
		startRereg()
	}
	defer reregTimer.Stop()

	for {
		select {
		case frame := <-s.out:
			if err := s.writeQueued(frame); err != nil { // session_write.go
				return stop(err)
			}
		case <-s.e.outReady:
			if err := s.sendOutbox(); err != nil {
				return stop(err)
			}
		case <-ph.Changed():
			ph.Schedule()
		case <-ph.Due():
			if err := ph.SendChanges(); err != nil {
				return stop(err)
			}
		case <-ping.C:
			if err := s.ping(); err != nil { // session_write.go
				return stop(err)
			}
		case <-reregTimer.C:
			// The server keeps the first copy of a name; if it had not yet
			// noticed our previous socket die, our first register_tools was
			// dropped. Re-sending is idempotent and heals that.
			if err := s.writeMessage(s.registerTools()); err != nil {
				return stop(err)
			}
			s.log.Debug().Msg("re-sent register_tools")
			if len(rereg) > 1 {
				reregTimer.Reset(rereg[1] - rereg[0])
			}
			rereg = rereg[1:]
		case <-s.e.hold.now:
			if s.toolsSent {
				break // registered at connect: Register came before it
			}
			if err := s.writeMessage(s.registerTools()); err != nil {
				return stop(err)
			}
			s.toolsSent = true
			s.e.state.update(func(st *connState) { st.Registered = true })
			s.log.Info().Msg("registered the tools")
			startRereg()
		case err := <-readerDone:
			readerDone <- err // stop waits on it
			return stop(err)
		case <-drained:
			if s.e.timings.BeforeClose != nil {
				s.e.timings.BeforeClose()
			}
			s.answerPending(s.e.timings.CloseWait) // session_calls.go
			s.closeGracefully(readerDone, "node shutting down")
			return stop(nil)
		case <-s.e.restart:
			s.answerPending(s.e.timings.CloseWait)
			s.closeGracefully(readerDone, "node reloading its tools")
			return stop(errRestartRequested)
		}
	}
}

// flush writes whatever results are already queued, without waiting for more.
func (s *session) flush() {
	for {
		select {
		case frame := <-s.out:
			if err := s.writeOut(frame); err != nil {
				return
			}
		default:
			return
		}
	}
}

func (s *session) closeGracefully(readerDone chan error, reason string) {
	if err := s.conn.SendClose(reason, hubconn.ControlWait); err != nil {
		return
	}
	t := time.NewTimer(s.e.timings.CloseWait)
	defer t.Stop()
	select {
	case err := <-readerDone: // the server answered our close frame
		readerDone <- err
	case <-t.C:
	}
}

// handle acts on one frame. It never blocks for long: calls are handed to
// the dispatcher, which answers through send.
func (s *session) handle(data []byte) {
	msg, err := wsproto.DecodeOwned(data)
	if err != nil {
		var de *wsproto.DecodeError
		if errors.As(err, &de) && de.Type == wsproto.TypeExecuteTool && de.RequestID != "" {
			// A call we cannot run is still a call the server waits on.
			s.answer(toolhost.Outcome{RequestID: de.RequestID, Err: "the node could not read this call: " + err.Error()})
		}
		s.e.warnings.Warn(s.log, "malformed", func(e *zerolog.Event) {
			e.Err(err).Int("bytes", len(data)).Msg("ignored a malformed frame")
		})
		return
	}
	switch m := msg.(type) {
	case wsproto.ExecuteTool:
		s.log.Debug().Str("request_id", humantext.ClipWire(m.RequestID)).Str("tool", humantext.ClipWire(m.ToolName)).Msg("execute_tool")
		s.dispatch(m) // session_calls.go
	case wsproto.CancelTool:
		if s.e.host.Cancel(m.RequestID) {
			s.log.Info().Str("request_id", humantext.ClipWire(m.RequestID)).Msg("server cancelled a call after its own timeout")
		}
	case wsproto.VCPManifestResponse, wsproto.VCPToolResult, wsproto.VCPToolStatus:
		if s.bridgeOn.Load() {
			s.e.bridge.Handle(m)
		}
	case wsproto.ConnectionAck:
		// Only recorded: old servers never send it, so nothing waits on it.
		s.e.state.update(func(st *connState) { st.ServerID = m.ServerID })
		s.log.Info().Str("server_id", humantext.ClipWire(m.ServerID)).Msg("server acknowledged the connection")
	default:
		s.log.Debug().Str("type", humantext.ClipWire(string(msg.MessageType()))).Msg("ignored a frame the node does not handle")
	}
}

// enqueue queues a frame for the writer. It fails instead of blocking once
// the session has ended.
func (s *session) enqueue(frame outFrame) error {
	// Checked first: a select with room in out would pick either case.
	select {
	case <-s.done:
		return errSessionEnded
	default:
	}
	select {
	case s.out <- frame:
		return nil
	case <-s.done:
		return errSessionEnded
	}
}

// sendResult turns a dispatcher outcome into a tool_result on this session.
// Results are bound to the connection that carried the call: the server
// fails pending calls when a connection ends, so a late result has no taker.
func (s *session) sendResult(o toolhost.Outcome) {
	if soakBrokenDropsResult(s, o) {
		if o.Stream != nil {
			o.Stream.Close()
		}
		return
	}
	out, err := s.resultFrame(o)
	if err != nil {
		if o.Stream != nil {
			o.Stream.Close()
		}
		frame, err := wsproto.Encode(wsproto.ToolResult{RequestID: o.RequestID, Status: wsproto.StatusError, Error: "the node could not send this result: " + err.Error()})
		if err != nil {
			s.log.Error().Err(err).Str("request_id", humantext.ClipWire(o.RequestID)).Msg("cannot encode a tool_result")
			return
		}
		out = outFrame{data: frame}
	}
	if err := s.enqueue(out); err != nil {
		out.discard()
		s.e.warnings.Warn(s.log, "result-dropped", func(e *zerolog.Event) {
			e.Str("request_id", humantext.ClipWire(o.RequestID)).Msg("result dropped: the connection that carried the call is gone, and the server has already failed it")
		})
	}
}

// resultFrame encodes an outcome, or prepares a streamed one, checked
// against the server's frame limit.
func (s *session) resultFrame(o toolhost.Outcome) (outFrame, error) {
	if o.Err == "" && o.Stream != nil {
		head, tail, err := wsproto.ToolResultParts(o.RequestID)
		if err != nil {
			return outFrame{}, err
		}
		if size := int64(len(head)+len(tail)) + o.Stream.MaxBytes(); size > config.ServerFrameLimit {
			return outFrame{}, fmt.Errorf("result frame of up to %d bytes exceeds the server's %d-byte limit", size, config.ServerFrameLimit)
		}
		return outFrame{stream: &streamedResult{requestID: o.RequestID, head: head, body: o.Stream, tail: tail}}, nil
	}
	res := wsproto.ToolResult{RequestID: o.RequestID, Status: wsproto.StatusSuccess, Result: o.Result}
	if o.Err != "" {
		res = wsproto.ToolResult{RequestID: o.RequestID, Status: wsproto.StatusError, Error: o.Err}
	}
	frame, err := wsproto.Encode(res)
	if err == nil && len(frame) > config.ServerFrameLimit {
		err = fmt.Errorf("result frame of %d bytes exceeds the server's %d-byte limit", len(frame), config.ServerFrameLimit)
	}
	return outFrame{data: frame}, err
}

func (s *session) write(frame []byte) error {
	// Allow a generous floor plus time proportional to the size (≥1 MiB/s).
	return s.conn.WriteText(frame, 10*time.Second+time.Duration(len(frame)>>20)*time.Second)
}

// sendMessage queues m for the writer; it fails once the session has ended.
func (s *session) sendMessage(m wsproto.Message) error {
	frame, err := wsproto.Encode(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.MessageType(), err)
	}
	return s.enqueue(outFrame{data: frame})
}

func (s *session) writeMessage(m wsproto.Message) error {
	frame, err := wsproto.Encode(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.MessageType(), err)
	}
	return s.write(frame)
}

// sendState sends everything the server must know after every connect: it
// keeps nothing of ours across connections.
// With the tools held back ([node] register = false), register_tools
// waits for Register (register.go).
func (s *session) sendState() error {
	if s.e.hold.isAllowed() {
		if err := s.writeMessage(s.registerTools()); err != nil {
			return err
		}
		s.toolsSent = true
	}
	return s.writeMessage(s.reportIP())
}

func (s *session) registerTools() wsproto.RegisterTools {
	tools, err := s.e.host.Manifests(s.st)
	if err != nil {
		// A manifest that cannot be built is left out rather than sent broken.
		s.log.Error().Err(err).Msg("cannot build some tool manifests")
	}
	if tools == nil {
		tools = []json.RawMessage{}
	}
	return wsproto.RegisterTools{
		ServerName:   s.st.Name,
		Capabilities: s.e.host.Capabilities(s.st),
		Tools:        tools,
	}
}

func (s *session) reportIP() wsproto.ReportIP {
	ips, err := s.e.host.LocalIPs()
	if err != nil {
		s.log.Warn().Err(err).Msg("cannot list local addresses; reporting none")
	}
	if ips == nil {
		ips = []string{}
	}
	return wsproto.ReportIP{ServerName: s.st.Name, LocalIPs: ips, PublicIP: s.st.Config.Hub.PublicIP}
}
