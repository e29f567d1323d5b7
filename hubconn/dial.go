package hubconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/config"
)

// ErrEmptyHandshake means the server closed the socket before any HTTP
// response: the real server does that for a bad key, a bad path and while
// draining, and a client cannot tell these apart (protocol.md §1.3).
var ErrEmptyHandshake = errors.New("server closed the connection before answering the handshake")

// RefusedError is an HTTP answer other than 101 to the upgrade.
type RefusedError struct{ Status string }

func (e *RefusedError) Error() string { return "handshake refused with HTTP " + e.Status }

// frameWriteBuffer is the WebSocket library's write buffer: a frame larger
// than this goes out in fragments of this size, each a write(2).
const frameWriteBuffer = 64 << 10

// Options are what a connection is dialled and kept with.
type Options struct {
	HandshakeTimeout time.Duration
	Liveness         Liveness
	ReadLimit        int64 // the largest frame accepted from the server
	// Header is sent with the handshake (the key, in DialAuth's header way).
	Header http.Header
}

// Dial opens a WebSocket to u (the node or an observer endpoint) and keeps
// its liveness from then on (New). Every error it returns is redacted;
// ErrEmptyHandshake and *RefusedError tell the server's refusals from a
// network failure.
func Dial(ctx context.Context, u *url.URL, o Options) (*Conn, error) {
	var socket *gatherConn
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: o.HandshakeTimeout,
		// A frame is written in pieces of this size: a streamed file's
		// 14 MB of base64 in 214 writes (and fragments for the server to
		// join) rather than 3,400 with the library's 4 KiB.
		WriteBufferSize: frameWriteBuffer,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var nd net.Dialer
			c, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			socket = &gatherConn{Conn: c}
			return socket, nil
		},
	}
	ws, resp, err := d.DialContext(ctx, u.String(), o.Header)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err == nil {
		c := New(ws, o.Liveness, o.ReadLimit)
		c.gather = socket
		return c, nil
	}
	switch {
	case resp != nil:
		return nil, &RefusedError{Status: resp.Status}
	case isEmptyHandshake(err):
		return nil, ErrEmptyHandshake
	default:
		return nil, config.RedactErr(fmt.Errorf("dial hub: %w", err))
	}
}

func isEmptyHandshake(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET)
}

// ReachedServer tells whether a dial got as far as the server's HTTP
// handler, which costs the server something; a refused TCP connect does not.
func ReachedServer(dialErr error) bool {
	var refused *RefusedError
	return dialErr == nil || errors.Is(dialErr, ErrEmptyHandshake) || errors.As(dialErr, &refused)
}
