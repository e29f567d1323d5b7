package demohub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/wsproto"
)

// handle serves one HTTP request on the hub's port. Upgrade requests for the
// node endpoint become connections; every other upgrade is refused the way
// the real server refuses it (protocol.md §1.3).
func (h *Hub) handle(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		// The real server hands plain HTTP to Express; a 404 is close enough.
		http.NotFound(w, r)
		return
	}
	if !h.enterHandler() {
		destroySocket(w)
		return
	}
	defer h.wg.Done()

	channel, isObserver := channelOf(r.RequestURI)
	if reason := h.admit(r); reason != "" {
		// The reason never includes the path: it may hold a near-miss key.
		h.logf("demohub: refused handshake from %s: %s", r.RemoteAddr, reason)
		destroySocket(w)
		return
	}
	if isObserver {
		h.handleObserver(w, r, channel)
		return
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.logf("demohub: upgrade from %s failed: %v", r.RemoteAddr, err)
		return
	}
	c := newConn(h, ws)
	if !h.track(c) {
		h.logf("demohub: hub stopping, dropped new connection from %s", r.RemoteAddr)
		_ = ws.Close()
		return
	}
	if !h.opts.NoAck {
		if err := c.sendAck(); err != nil {
			h.logf("demohub: connection %s: send connection_ack: %v", c.id, err)
		}
	}
	h.wg.Add(1) // this handler still holds its own count, so Add is safe
	go c.readLoop()
	h.logf("demohub: node connected from %s as %s", r.RemoteAddr, c.id)
	h.publish(c)
}

// enterHandler counts a handler in h.wg unless the hub is closed, so Close
// can wait for handlers without racing with their start.
func (h *Hub) enterHandler() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// admit decides whether an upgrade attempt may proceed; a non-empty result
// is the reason for refusing it, already counted.
func (h *Hub) admit(r *http.Request) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	reason := ""
	switch {
	case h.srv == nil:
		reason = "server stopped"
	case h.refuseLeft != 0:
		if h.refuseLeft > 0 {
			h.refuseLeft--
		}
		reason = "told to refuse handshakes"
	default:
		if key, ok := h.keyOf(r); !ok || key != h.opts.Key { // auth.go
			reason = "wrong path or key"
		}
	}
	if reason != "" {
		h.refused++
		h.notifyLocked()
	}
	return reason
}

// keyFromRequestURI reads the key the way the real server does: from the raw
// request target, query cut off, backslashes turned into slashes, and
// nothing percent-decoded (protocol.md §1.1–1.2).
func keyFromRequestURI(uri string) (string, bool) {
	path, _, _ := strings.Cut(uri, "?")
	path = strings.ReplaceAll(path, `\`, "/")
	key, ok := strings.CutPrefix(path, EndpointPrefix)
	// The server's regex is (.+)$ without the s flag: no line terminators.
	if !ok || key == "" || strings.ContainsAny(key, "\r\n\u2028\u2029") {
		return "", false
	}
	return key, true
}

// destroySocket closes the client's socket before any HTTP response, as the
// real server's socket.destroy() does: the client sees EOF and no status.
func destroySocket(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // the server closes the connection without a response
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// sendAck writes connection_ack exactly as the real server shapes it: the
// "message" field sits beside "type" and "data" (protocol.md §1.5).
func (c *Conn) sendAck() error {
	var frame struct {
		Type    wsproto.Type `json:"type"`
		Message string       `json:"message"`
		Data    struct {
			ServerID string `json:"serverId"`
			ClientID string `json:"clientId"`
		} `json:"data"`
	}
	frame.Type = wsproto.TypeConnectionAck
	frame.Message = ackMessage
	frame.Data.ServerID = c.ServerID()
	frame.Data.ClientID = c.id
	data, err := json.Marshal(frame)
	if err != nil {
		return fmt.Errorf("encode connection_ack: %w", err)
	}
	ack := wsproto.ConnectionAck{Message: ackMessage, ServerID: c.ServerID(), ClientID: c.id}
	ctx, cancel := context.WithTimeout(context.Background(), defaultWriteTimeout)
	defer cancel()
	return c.write(ctx, websocket.TextMessage, data, ack, nil)
}
