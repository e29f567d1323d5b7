package hubconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/config"
)

// ControlWait bounds the write of a control frame (ping, pong, close).
const ControlWait = 5 * time.Second

// ErrCloseSent is returned by a write after the close frame went out.
var ErrCloseSent = websocket.ErrCloseSent

// Liveness is how a connection proves the server alive: a ping every
// PingInterval, and no sign of life for PingInterval + PongTimeout ends it.
type Liveness struct {
	PingInterval, PongTimeout time.Duration
}

// LivenessOf is the liveness [hub] sets for every connection to the server.
func LivenessOf(hub config.HubConfig) Liveness {
	return Liveness{PingInterval: hub.PingInterval.D(), PongTimeout: hub.PongTimeout.D()}
}

// Window is the longest silence a live connection allows.
func (l Liveness) Window() time.Duration { return l.PingInterval + l.PongTimeout }

// Conn is one WebSocket to the server with its liveness. One goroutine
// reads (NextReader) and one writes data frames; Ping, SendClose and Close
// may be called from any goroutine.
type Conn struct {
	ws        *websocket.Conn
	live      Liveness
	readLimit int64
	liveUntil atomic.Int64 // the read deadline, Unix nanoseconds
	onPong    atomic.Pointer[func(data string)]
	gather    *gatherConn // the socket, when Dial made it (gather.go)
}

// New takes over ws: it sets the read limit and the read deadline, answers
// the server's pings, and counts every pong and ping as a sign of life.
func New(ws *websocket.Conn, live Liveness, readLimit int64) *Conn {
	c := &Conn{ws: ws, live: live, readLimit: readLimit}
	ws.SetReadLimit(readLimit)
	c.Alive()
	ws.SetPongHandler(func(data string) error {
		c.Alive()
		if f := c.onPong.Load(); f != nil {
			(*f)(data)
		}
		return nil
	})
	ws.SetPingHandler(c.answerPing)
	return c
}

// Alive records a sign of life: the read deadline moves to the liveness
// window from now. Any frame or pong proves the connection alive; pings go
// out every PingInterval, so a longer silence means one went unanswered.
func (c *Conn) Alive() {
	until := time.Now().Add(c.live.Window())
	c.liveUntil.Store(until.UnixNano())
	_ = c.ws.SetReadDeadline(until)
}

// LiveUntil is the read deadline: when the connection is given up unless
// a sign of life comes first.
func (c *Conn) LiveUntil() time.Time { return time.Unix(0, c.liveUntil.Load()) }

// NextReader waits for the next data frame (answering pings and seeing
// pongs meanwhile) and counts its start as a sign of life. Its error is
// already classified and redacted (ReadError).
func (c *Conn) NextReader() (io.Reader, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return nil, c.ReadError(err)
	}
	c.Alive()
	return r, nil
}

// ReadError says why reading failed, in words for the log and status,
// with the key redacted from anything the server or the library echoed.
func (c *Conn) ReadError(err error) error {
	var ne net.Error
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no pong or frame from the server for %s: connection presumed dead", c.live.Window())
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("server sent a frame larger than %d bytes: %w", c.readLimit, err)
	case errors.As(err, &ce):
		return fmt.Errorf("server closed the connection (code %d %q)", ce.Code, config.Redact(ce.Text))
	default:
		return config.RedactErr(fmt.Errorf("read: %w", err))
	}
}

func (c *Conn) answerPing(data string) error {
	c.Alive()
	err := c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(ControlWait))
	var ne net.Error
	if err == nil || errors.Is(err, websocket.ErrCloseSent) || (errors.As(err, &ne) && ne.Timeout()) {
		return nil // the read side sees the problem, if there is one
	}
	return err
}

// OnPong makes f see the payload of every pong, on the reader goroutine:
// a pong proves the server read everything written before its ping.
func (c *Conn) OnPong(f func(data string)) { c.onPong.Store(&f) }

// Ping sends one ping; its pong, or any frame, is the sign of life.
func (c *Conn) Ping() error { return c.PingWith("") }

// PingWith sends a ping carrying data (at most 125 bytes), which its pong echoes.
func (c *Conn) PingWith(data string) error {
	if err := c.ws.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(ControlWait)); err != nil {
		return config.RedactErr(fmt.Errorf("send ping: %w", err))
	}
	return nil
}

// WriteText writes one text frame within wait.
func (c *Conn) WriteText(data []byte, wait time.Duration) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(wait))
	if err := c.ws.WriteMessage(websocket.TextMessage, data); err != nil {
		return config.RedactErr(fmt.Errorf("write: %w", err))
	}
	return nil
}

// NextWriter begins a text frame that must be written within wait. Errors
// of the writer it returns are the caller's to redact.
func (c *Conn) NextWriter(wait time.Duration) (io.WriteCloser, error) {
	_ = c.ws.SetWriteDeadline(time.Now().Add(wait))
	w, err := c.ws.NextWriter(websocket.TextMessage)
	if err != nil {
		return nil, config.RedactErr(fmt.Errorf("write: %w", err))
	}
	return w, nil
}

// SendClose writes a "going away" close frame with reason, within wait.
// The server's answer ends the reader's NextReader.
func (c *Conn) SendClose(reason string, wait time.Duration) error {
	msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, reason)
	return c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wait))
}

// Close closes the socket at once (no close frame).
func (c *Conn) Close() error { return c.ws.Close() }
