package hubsession

import (
	"time"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// dispatch hands one execute_tool to the dispatcher under the session's
// call context; its answer goes out on this connection.
func (s *session) dispatch(m wsproto.ExecuteTool) {
	if !s.calls.Begin() {
		s.log.Warn().Str("request_id", humantext.ClipWire(m.RequestID)).Str("tool", humantext.ClipWire(m.ToolName)).
			Msg("execute_tool arrived after the node's close frame went out: not run and not answered")
		return
	}
	call := toolhost.Call{RequestID: m.RequestID, Args: m.ToolArgs, Context: m.VCPContext, Streams: true, Origin: s.origin}
	reply := func(o toolhost.Outcome) {
		s.sendResult(o)
		s.calls.End()
	}
	if !s.e.host.Dispatch(s.callCtx, s.st, m.ToolName, call, reply) {
		s.calls.End() // a duplicate: no reply will come
	}
}

// answer sends an outcome the session makes itself (a call it could not
// read), counted like a dispatched call so it is not lost to the close.
func (s *session) answer(o toolhost.Outcome) {
	if !s.calls.Begin() {
		return
	}
	defer s.calls.End()
	s.sendResult(o)
}

// answerPending is the writer's last duty before its close frame: it stops
// taking calls once every call already read has its answer queued, writing
// answers meanwhile, then writes what is queued. It waits at most wait:
// past that, calls still running are left to the session's end (endCalls).
func (s *session) answerPending(wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for logged := false; ; {
		idle, n := s.calls.CloseIfIdle()
		if idle == nil {
			break
		}
		if !logged {
			logged = true
			s.log.Debug().Int("calls", n).Msg("closing: answering the calls already read first")
		}
		select {
		case frame := <-s.out:
			if err := s.writeOut(frame); err != nil {
				s.calls.Close()
				return
			}
		case <-idle:
		case <-t.C:
			_, n := s.calls.Close()
			s.log.Warn().Int("calls", n).Dur("waited", wait).Msg("closing with calls still running; they are handled as the connection ends")
		}
	}
	s.flush()
}

// endCalls decides the fate of the calls of a session that has ended. The
// server failed them when their connection closed and drops any later
// result: those not started are dropped at once, and those running are
// cancelled after a grace that lets a call about to finish do so rather
// than be killed halfway through its work. Neither holds up the calls of
// the next connection (toolhost.Dispatcher.EndOrigin).
func (s *session) endCalls() {
	if dropped := s.e.host.EndOrigin(s.origin, errSessionEnded); dropped > 0 {
		s.log.Info().Int("calls", dropped).
			Msg("connection ended: dropped the calls it carried that had not started (the server has already failed them)")
	}
	idle, n := s.calls.Close()
	if n == 0 {
		s.cancelCalls(errSessionEnded)
		return
	}
	grace := s.e.timings.SessionCallGrace
	s.log.Warn().Int("calls", n).Dur("grace", grace).
		Msg("connection ended with calls still running; the server has already failed them, so they are cancelled unless they finish within the grace period")
	s.e.bg.Go(func() { s.e.host.Guard("ended session's calls", func() { s.cancelAfter(idle, grace) }) })
}

// cancelAfter cancels the calls of an ended connection once they are done
// or after grace.
func (s *session) cancelAfter(idle <-chan struct{}, grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-idle:
		s.cancelCalls(errSessionEnded)
	case <-t.C:
		left := s.calls.Count()
		s.cancelCalls(errSessionEnded)
		if left > 0 {
			s.log.Warn().Int("calls", left).Msg("cancelled the calls of an ended connection")
		}
	}
}
