package hubsession

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// outFrame is one frame for the writer: bytes ready to send, or a result
// written into the frame as it is produced (a file streamed from disk).
type outFrame struct {
	data   []byte
	stream *streamedResult
}

// streamedResult is a tool_result whose result a StreamResult writes
// between head and tail, straight into the WebSocket frame writer.
type streamedResult struct {
	requestID  string
	head, tail []byte
	body       toolhost.StreamResult
}

// discard releases a frame that will never be written.
func (f outFrame) discard() {
	if f.stream != nil {
		f.stream.body.Close()
	}
}

func (s *session) writeOut(f outFrame) error {
	if f.stream != nil {
		return s.writeStream(f.stream)
	}
	return s.write(f.data)
}

// maxBatch bounds how many queued frames are written in one go before the
// run loop looks at its other duties (pings, placeholders, shutdown).
const maxBatch = 64

// writeQueued writes f and the frames already queued behind it, up to
// maxBatch, gathered into as few write(2)s as their size allows (the
// socket's buffer, hubconn's Gather). Nothing waits to be gathered: what is
// not yet queued goes in the next batch, and a frame alone is written alone.
func (s *session) writeQueued(f outFrame) error {
	if len(s.out) == 0 {
		return s.writeOut(f)
	}
	s.conn.Gather()
	for i := 1; ; i++ {
		if err := s.writeOut(f); err != nil {
			s.conn.Flush()
			return err
		}
		if i == maxBatch {
			break
		}
		select {
		case f = <-s.out:
			continue
		default:
		}
		break
	}
	return s.conn.Flush()
}

// errStreamBroken: a streamed result failed after its frame was begun. The
// frame cannot be taken back, so the connection is given up; the server
// fails the call when the connection closes.
var errStreamBroken = errors.New("a streamed result failed halfway through its frame")

func (s *session) writeStream(st *streamedResult) error {
	defer st.body.Close()
	size := int64(len(st.head)+len(st.tail)) + st.body.MaxBytes()
	w, err := s.conn.NextWriter(10*time.Second + time.Duration(size>>20)*time.Second)
	if err != nil {
		return err
	}
	if _, err := w.Write(st.head); err != nil {
		return config.RedactErr(fmt.Errorf("write: %w", err))
	}
	body := &errTrackingWriter{w: w}
	if err := st.body.WriteJSON(body); err != nil {
		if body.err != nil { // the connection failed, not the result
			return config.RedactErr(fmt.Errorf("write: %w", body.err))
		}
		s.log.Error().Err(err).Str("request_id", humantext.ClipWire(st.requestID)).
			Msg("a streamed result failed after its frame was begun; closing the connection (the server fails the call)")
		return fmt.Errorf("%w: %w", errStreamBroken, err)
	}
	if _, err := w.Write(st.tail); err != nil {
		return config.RedactErr(fmt.Errorf("write: %w", err))
	}
	if err := w.Close(); err != nil {
		return config.RedactErr(fmt.Errorf("write: %w", err))
	}
	return nil
}

// errTrackingWriter tells the writer's own failures from the result's.
type errTrackingWriter struct {
	w   io.Writer
	err error
}

func (t *errTrackingWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// discardQueued releases what is still queued once the writer has stopped.
func (s *session) discardQueued() {
	for {
		select {
		case f := <-s.out:
			f.discard()
		default:
			return
		}
	}
}

// startOutbox begins the outbox's part of a new connection: what an earlier
// one wrote without confirmation goes out again first, and pongs confirm.
func (s *session) startOutbox() {
	s.e.host.Outbox().Rewind()
	s.conn.OnPong(func(data string) { s.e.host.Outbox().Confirm(data) })
}

// sendOutbox writes the stored callbacks on this connection, in order, and
// then a ping, whose pong confirms them promptly. It runs in the session's
// writer (run), like every other data frame.
func (s *session) sendOutbox() error {
	box := s.e.host.Outbox()
	before := box.Mark()
	err := box.Drain(func(body json.RawMessage) error {
		return s.writeMessage(wsproto.PluginCallbackForward{ServerName: s.st.Name, CallbackData: body})
	})
	if m := box.Mark(); err == nil && m != before && m != "" {
		return s.conn.PingWith(m)
	}
	return err
}

// ping is the session's periodic ping; it also confirms the callbacks
// written so far.
func (s *session) ping() error { return s.conn.PingWith(s.e.host.Outbox().Mark()) }

// writePlaceholders sends placeholder values (the feed's Push decides which).
func (s *session) writePlaceholders(values map[string]string) error {
	return s.writeMessage(wsproto.UpdateStaticPlaceholders{ServerName: s.st.Name, Placeholders: values})
}
