package hubsession

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// The reader only reads: it pulls frames off the socket (which is also where
// gorilla answers pings and sees pongs) and hands them, in order, to one
// decoder goroutine. A large frame is decoded while the reader goes on
// reading, so liveness never waits for a decode. What bounds memory is a
// budget of bytes read but not yet decoded.
//
// Liveness: the read deadline is always ping_interval + pong_timeout from
// the last sign of life (a frame, a chunk of one, a pong or a ping).
// Nothing stretches it. A frame that finds no decoder room waits at most
// half of what is left of that window, then is refused as busy, so the
// reader is back on the socket in time to see the next pong.

const (
	// inboxDepth bounds how many frames wait for the decoder; each frame is
	// charged at least budget/inboxDepth so a flood of tiny frames is bounded too.
	inboxDepth = 256
	// readChunk is how much is read at a time once a frame is larger than
	// the first chunk; each chunk read proves the connection alive.
	readChunk  = 1 << 20
	firstChunk = 16 << 10
)

// budget is a counting semaphore over bytes.
type budget struct {
	size  int64
	mu    sync.Mutex
	free  int64
	freed chan struct{} // closed and replaced on every release
}

func newBudget(n int64) *budget {
	return &budget{size: n, free: n, freed: make(chan struct{})}
}

// acquire takes n bytes, waiting until they are free, timeout passes (false)
// or stop is closed (false).
func (b *budget) acquire(n int64, timeout time.Duration, stop <-chan struct{}) bool {
	var deadline <-chan time.Time
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		ch := b.freed
		b.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		case <-stop:
			return false
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free += n
	close(b.freed)
	b.freed = make(chan struct{})
}

type inbound struct {
	frame   []byte
	cost    int64
	counted bool // holds a place in s.calls, so closing waits for its decode
}

// readLoop reads frames until the connection fails. Before returning it
// waits until every frame it read has been handled, so that a caller of
// run can rely on all of them having been dispatched.
func (s *session) readLoop() error {
	inbox := make(chan inbound, inboxDepth)
	go func() {
		for in := range inbox {
			// A panic is a fatal stop, but the frames read go on being
			// handled (refused, since the node is stopping) and counted.
			s.e.host.Guard("session decoder", func() {
				if s.e.timings.BeforeDecode != nil {
					s.e.timings.BeforeDecode(len(in.frame))
				}
				// The server failed every call of a connection that has
				// ended: running them would be work for nothing.
				if !s.readEnded.Load() {
					s.handle(in.frame)
				}
			})
			s.e.decodeBudget.release(in.cost)
			if in.counted {
				s.calls.End()
			}
		}
	}()
	// The reader does not wait for the decoder once the connection has
	// failed: frames still queued are dropped at once, and the next
	// connection never waits behind a decode of this one.
	defer func() {
		s.readEnded.Store(true)
		s.dropQueued(inbox)
		close(inbox)
	}()

	minCost := s.e.decodeBudget.size / inboxDepth
	congested := false
	for {
		r, err := s.conn.NextReader()
		if err != nil {
			return err
		}
		frame, err := s.readFrame(r)
		if err != nil {
			return s.conn.ReadError(err)
		}
		cost := max(int64(len(frame)), minCost)
		// Once a frame has been refused, the frames behind it (likely sent
		// in the same burst) are refused without waiting, until room frees:
		// a burst must not keep the reader off the socket frame by frame.
		wait := s.roomWait()
		if congested {
			wait = 0
		}
		if !s.e.decodeBudget.acquire(cost, wait, s.done) {
			congested = true
			s.refuseBusy(frame)
			continue
		}
		congested = false
		// A frame read before the close frame may be a call that must be
		// answered first: it counts as pending until it is decoded.
		inbox <- inbound{frame: frame, cost: cost, counted: s.calls.Begin()}
	}
}

// readFrame reads one message. Small ones are read into a scratch buffer and
// copied out at their size; large ones in chunks assembled once at the end,
// so that no growing buffer leaves copies behind. Every chunk extends the
// read deadline: a slow large frame is progress, not silence.
func (s *session) readFrame(r io.Reader) ([]byte, error) {
	if s.scratch == nil {
		s.scratch = make([]byte, firstChunk)
	}
	n, err := io.ReadFull(r, s.scratch)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return bytes.Clone(s.scratch[:n]), nil
	case err != nil:
		return nil, err
	}
	chunks := [][]byte{bytes.Clone(s.scratch)}
	total := n
	for {
		c := make([]byte, readChunk)
		n, err := io.ReadFull(r, c)
		total += n
		if n > 0 {
			chunks = append(chunks, c[:n])
			s.conn.Alive()
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	frame := make([]byte, 0, total)
	for i, c := range chunks {
		frame = append(frame, c...)
		chunks[i] = nil // let each chunk go as soon as it is copied
	}
	return frame, nil
}

// dropQueued releases the frames of a failed connection that the decoder
// has not taken yet; the decoder drops the one it may be holding.
func (s *session) dropQueued(inbox chan inbound) {
	dropped := 0
	for {
		select {
		case in := <-inbox:
			dropped++
			s.e.decodeBudget.release(in.cost)
			if in.counted {
				s.calls.End()
			}
		default:
			if dropped > 0 {
				s.log.Info().Int("frames", dropped).
					Msg("dropped frames read just before the connection ended, unhandled: the server has already failed any call among them")
			}
			return
		}
	}
}

// roomWait is how long a frame may wait for decoder room: busyWait, but
// never more than half of what is left of the liveness window, so that the
// reader reads again (and sees a pong) before the window closes.
func (s *session) roomWait() time.Duration {
	left := time.Until(s.conn.LiveUntil())
	return max(0, min(s.e.timings.BusyWait, left/2))
}

// refuseBusy answers a frame the decoder had no room for within busyWait:
// an execute_tool gets a "node busy" error result, the bridge learns of a
// server tool's result or progress it loses, and each is logged.
// Finding the requestId reads only as far as it.
func (s *session) refuseBusy(frame []byte) {
	typ, id := wsproto.PeekCall(frame)
	switch {
	case typ == wsproto.TypeExecuteTool && id != "":
		s.answer(toolhost.Outcome{RequestID: id,
			Err: fmt.Sprintf("node busy: %d bytes of frames are already waiting to be decoded; try again later", s.e.decodeBudget.size)})
	case typ == wsproto.TypeVCPToolStatus && s.e.bridge != nil:
		s.e.bridge.StatusLost() // its caller learns how many it lost
	case typ == wsproto.TypeVCPToolResult && s.e.bridge != nil && id != "":
		s.e.bridge.ResultLost(id)
	}
	s.e.warnings.Warn(s.log, "busy", func(e *zerolog.Event) {
		e.Str("type", humantext.ClipWire(string(typ))).Str("request_id", humantext.ClipWire(id)).Int("bytes", len(frame)).
			Msg("node busy decoding earlier frames: refused a frame")
	})
}

// Warnings the server can cause at any rate go through e.warnings, a
// toolhost.WarnLimiter; values taken from the wire are clipped.
