package demohub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/wsproto"
)

// Conn is one node connection as the hub sees it. One goroutine reads it;
// writes are serialised. Its methods are safe for concurrent use.
type Conn struct {
	hub    *Hub
	ws     *websocket.Conn
	id     string
	seq    uint64
	remote string

	writeSem    chan struct{} // one data-frame writer at a time; control frames bypass it
	stopPonging atomic.Bool
	done        chan struct{}

	mu      sync.Mutex
	ended   bool
	endErr  error
	history []Frame // received, unless NoHistory
	sent    []Frame // sent, unless NoHistory
	queue   []Frame // received, decoded, not yet consumed by WaitFor or Call
	calls   map[string]chan wsproto.ToolResult
	pings   int             // pings received from the node
	pongs   int             // pongs received from the node
	pongFor map[string]bool // outstanding Ping payloads → answered
	changes changes         // wakes waitUntil on every state change
}

func newConn(h *Hub, ws *websocket.Conn) *Conn {
	id, seq := h.newClientID()
	c := &Conn{
		hub:      h,
		ws:       ws,
		id:       id,
		seq:      seq,
		remote:   ws.RemoteAddr().String(),
		writeSem: make(chan struct{}, 1),
		done:     make(chan struct{}),
		calls:    make(map[string]chan wsproto.ToolResult),
		pongFor:  make(map[string]bool),
		changes:  newChanges(),
	}
	c.stopPonging.Store(h.opts.NoPong)
	ws.SetReadLimit(h.opts.ReadLimit)
	ws.SetPingHandler(c.onPing)
	ws.SetPongHandler(c.onPong)
	return c
}

// ID is the connection's clientId, as in connection_ack.
func (c *Conn) ID() string { return c.id }

// ServerID is "dist-"+ID, the serverId of connection_ack.
func (c *Conn) ServerID() string { return "dist-" + c.id }

// RemoteAddr is the node's address as the hub sees it.
func (c *Conn) RemoteAddr() string { return c.remote }

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (a *websocket.CloseError for a close
// frame or an abrupt end, websocket.ErrReadLimit for an oversized frame), or
// nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endErr
}

func (c *Conn) notifyLocked() { c.changes.notify() }

// waitUntil blocks until cond (called with c.mu held) is true, the
// connection ends, or ctx is done. Frames that arrived before the end still
// satisfy cond.
func (c *Conn) waitUntil(ctx context.Context, what string, cond func() bool) error {
	return c.changes.wait(ctx, "connection "+c.id+": waiting for "+what, &c.mu, cond, func() error {
		if c.ended {
			return fmt.Errorf("%w (id %s) while waiting for %s: %w", ErrConnClosed, c.id, what, c.endErr)
		}
		return nil
	})
}

// readLoop owns every read of the connection until it ends.
func (c *Conn) readLoop() {
	defer c.hub.wg.Done()
	for {
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			c.finish(err)
			return
		}
		c.receive(kind, data)
	}
}

func (c *Conn) receive(kind int, data []byte) {
	f := Frame{Dir: FromNode, ConnID: c.id, Raw: data, Binary: kind == websocket.BinaryMessage, At: time.Now()}
	f.Msg, f.Err = wsproto.Decode(data)
	if f.Err != nil {
		f.Msg = nil
	}
	// Observed before anyone can consume it, so observers see frames in wire order.
	c.hub.observe(f)
	if f.Msg != nil && c.bridgeFrame(f.Msg) {
		// The server's bridge takes these frames: recorded, never queued.
		if !c.hub.opts.NoHistory {
			c.mu.Lock()
			c.history = append(c.history, f)
			c.notifyLocked()
			c.mu.Unlock()
		}
		return
	}
	c.mu.Lock()
	if !c.hub.opts.NoHistory {
		c.history = append(c.history, f)
	}
	if f.Msg != nil && !c.deliverCallResultLocked(f.Msg) {
		c.queue = append(c.queue, f)
	}
	c.notifyLocked()
	c.mu.Unlock()
}

// deliverCallResultLocked hands a tool_result to the Call waiting for it.
func (c *Conn) deliverCallResultLocked(m wsproto.Message) bool {
	var res wsproto.ToolResult
	switch v := m.(type) {
	case wsproto.ToolResult:
		res = v
	case *wsproto.ToolResult:
		res = *v
	default:
		return false
	}
	ch, ok := c.calls[res.RequestID]
	if !ok {
		return false
	}
	delete(c.calls, res.RequestID)
	ch <- res // buffered, one result per call
	return true
}

func (c *Conn) finish(err error) {
	if errors.Is(err, websocket.ErrReadLimit) {
		c.lingerAfterClose()
	}
	_ = c.ws.Close()
	c.hub.untrack(c) // first, so Conns() no longer lists it once Done is closed
	c.mu.Lock()
	c.ended = true
	c.endErr = err
	close(c.done)
	c.notifyLocked()
	c.mu.Unlock()
	c.hub.logf("demohub: connection %s ended: %v", c.id, err)
}

// lingerAfterClose discards what the node is still sending after the hub
// sent a close frame mid-message, so closing the socket does not reset the
// connection before the node has read that close frame.
func (c *Conn) lingerAfterClose() {
	nc := c.ws.NetConn()
	_ = nc.SetReadDeadline(time.Now().Add(closeGrace))
	_, _ = io.Copy(io.Discard, nc)
}

// writeFailed drops the connection after a failed write: gorilla refuses
// every later write, so the hub must not keep a half-usable connection.
func (c *Conn) writeFailed(what string, err error) error {
	c.Drop()
	return fmt.Errorf("%w (id %s): %s: %w", ErrConnClosed, c.id, what, err)
}

// Drop closes the TCP connection at once, without a close frame. Done is
// closed shortly after.
func (c *Conn) Drop() {
	_ = c.ws.Close()
}

// CloseWith sends a close frame with code and text (1005 sends an empty
// one) and waits up to a couple of seconds for the node to answer before
// closing the socket.
func (c *Conn) CloseWith(code int, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	closeAll(ctx, []*Conn{c}, code, text)
}

// closeAll sends close frames to every conn, waits for their ends until ctx
// is done, then drops whatever is left.
func closeAll(ctx context.Context, conns []*Conn, code int, text string) {
	payload := websocket.FormatCloseMessage(code, text)
	deadline := time.Now().Add(closeGrace)
	for _, c := range conns {
		if err := c.ws.WriteControl(websocket.CloseMessage, payload, deadline); err != nil {
			c.Drop()
		}
	}
	for _, c := range conns {
		select {
		case <-c.done:
		case <-ctx.Done():
			c.Drop()
		}
	}
}

// StopPonging makes the connection ignore the node's pings from now on. It
// keeps reading frames, so only the node's liveness check can notice.
func (c *Conn) StopPonging() { c.stopPonging.Store(true) }

// onPing runs on the reader goroutine; it answers like gorilla's default
// handler unless told not to, then counts the ping.
func (c *Conn) onPing(appData string) error {
	var err error
	if !c.stopPonging.Load() {
		err = c.ws.WriteControl(websocket.PongMessage, []byte(appData), time.Now().Add(defaultWriteTimeout))
		var netErr net.Error
		if errors.Is(err, websocket.ErrCloseSent) || errors.As(err, &netErr) {
			err = nil // as the default handler: the read side will see the problem
		}
	}
	c.mu.Lock()
	c.pings++
	c.notifyLocked()
	c.mu.Unlock()
	return err
}

func (c *Conn) onPong(appData string) error {
	c.mu.Lock()
	c.pongs++
	if _, ok := c.pongFor[appData]; ok {
		c.pongFor[appData] = true
	}
	c.notifyLocked()
	c.mu.Unlock()
	return nil
}

// PingsReceived counts the pings the node sent, answered or not.
func (c *Conn) PingsReceived() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pings
}

// WaitPings blocks until the node has sent at least n pings. By then the
// hub has already written its pong for each (unless it stopped ponging).
func (c *Conn) WaitPings(ctx context.Context, n int) error {
	return c.waitUntil(ctx, fmt.Sprintf("%d pings", n), func() bool { return c.pings >= n })
}

// PongCount counts the pongs the node sent.
func (c *Conn) PongCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pongs
}

// Ping sends a ping with a fresh payload and waits for the node's matching
// pong (a node answers pings only while it reads).
func (c *Conn) Ping(ctx context.Context) error {
	payload := fmt.Sprintf("fh-ping-%d", c.hub.pingN.Add(1))
	c.mu.Lock()
	c.pongFor[payload] = false
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pongFor, payload)
		c.mu.Unlock()
	}()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultWriteTimeout)
	}
	if err := c.ws.WriteControl(websocket.PingMessage, []byte(payload), deadline); err != nil {
		return c.writeFailed("send ping", err)
	}
	return c.waitUntil(ctx, "a pong", func() bool { return c.pongFor[payload] })
}
