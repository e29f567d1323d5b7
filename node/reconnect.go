package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/config"
)

// errEmptyHandshake means the server closed the socket before any HTTP
// response: the real server does that for a bad key, a bad path and while
// draining, and a client cannot tell these apart (protocol.md §1.3).
var errEmptyHandshake = errors.New("server closed the connection before answering the handshake")

// connectLoop dials, runs a session, and waits between attempts, until ctx
// is cancelled. It never gives up: a node on a laptop outlives many server
// restarts. The wait schedule starts over as soon as a connection is
// accepted and register_tools sent, however short the session then is; the
// connection limiter, not slow retries, protects the server from a node
// whose sessions keep dying.
func (n *Node) connectLoop(ctx context.Context, drained <-chan struct{}) {
	clk := n.timings.clock
	sched := newRetrySchedule(n.timings.retry, clk.Now, n.timings.jitter)
	limit := newConnLimiter(n.timings.connsPerMinute, n.timings.connBurst, clk.Now)

	emptyHandshakes := 0
	hinted, limited := false, false
	for ctx.Err() == nil {
		if d := limit.delay(); d > 0 {
			if !limited {
				limited = true
				n.log.Warn().Int("per_minute", n.timings.connsPerMinute).Dur("wait", d.Round(time.Millisecond)).
					Msg("connecting too often: waiting before the next attempt to spare the server")
			}
			n.state.update(func(s *ConnState) { s.Phase = PhaseBackoff; s.RetryAt = clk.Now().Add(d) })
			if !n.sleep(ctx, d) {
				return
			}
			continue
		}
		limited = false
		n.state.update(func(s *ConnState) { s.Phase = PhaseConnecting; s.RetryAt = time.Time{} })
		st := n.settings()
		conn, err := n.dial(ctx, st)
		if reachedServer(err) {
			limit.take()
		}
		if err == nil {
			emptyHandshakes = 0
			started := clk.Now()
			n.state.update(func(s *ConnState) {
				s.Phase = PhaseConnected
				s.ServerID = ""
				s.Attempt = 0
				s.Sessions++
			})
			n.log.Info().Str("hub", config.RedactedURL(st.hubURL)).Msg("connected")
			sess := newSession(n, conn, st)
			err = sess.run(ctx, drained)
			n.warnings.Flush(n.log)
			if sess.registered {
				sched.reset()
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errRestartRequested) {
				n.log.Info().Msg("reconnecting so the server sees the new tool set")
				continue
			}
			n.log.Warn().Err(err).Dur("up", clk.Now().Sub(started).Round(time.Millisecond)).Msg("connection lost")
		} else {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errEmptyHandshake) {
				emptyHandshakes++
				if emptyHandshakes >= n.timings.emptyHandshakesBeforeHint && !hinted {
					hinted = true
					n.log.Error().Int("attempts", emptyHandshakes).
						Msg("server closed the handshake without a response several times in a row: bad key, bad path, or server draining")
				}
			} else {
				emptyHandshakes = 0
			}
		}
		wait := sched.next()
		msg := err.Error()
		n.state.update(func(s *ConnState) {
			s.Phase = PhaseBackoff
			s.Attempt = sched.attempts()
			s.RetryAt = clk.Now().Add(wait)
			s.LastError = msg
		})
		n.log.Info().Err(err).Dur("retry_in", wait.Round(time.Millisecond)).Msg("will reconnect")
		if !n.sleep(ctx, wait) {
			return
		}
	}
}

// reachedServer tells whether a dial got as far as the server's HTTP
// handler, which costs the server something; a refused TCP connect does not.
func reachedServer(dialErr error) bool {
	var refused *handshakeRefusedError
	return dialErr == nil || errors.Is(dialErr, errEmptyHandshake) || errors.As(dialErr, &refused)
}

// sleep waits d, or less when ctx ends (false) or `vcpnode reconnect` asks (true).
func (n *Node) sleep(ctx context.Context, d time.Duration) bool {
	fire, stop := n.timings.clock.Timer(d)
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-n.reconnect:
		n.log.Info().Msg("reconnecting now, as asked")
		return true
	case <-fire:
		return true
	}
}

// handshakeRefusedError is an HTTP answer other than 101 to the upgrade.
type handshakeRefusedError struct{ status string }

func (e *handshakeRefusedError) Error() string { return "handshake refused with HTTP " + e.status }

// dial opens the WebSocket. Every error it returns is redacted.
func (n *Node) dial(ctx context.Context, st *settings) (*websocket.Conn, error) {
	return dialWS(ctx, st.hubURL, st.cfg.Hub.HandshakeTimeout.D())
}

// dialWS opens a WebSocket to u (node or observer endpoint). Every error it
// returns is redacted.
func dialWS(ctx context.Context, u *url.URL, handshakeTimeout time.Duration) (*websocket.Conn, error) {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: handshakeTimeout,
	}
	conn, resp, err := d.DialContext(ctx, u.String(), nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err == nil {
		return conn, nil
	}
	switch {
	case resp != nil:
		return nil, &handshakeRefusedError{status: resp.Status}
	case isEmptyHandshake(err):
		return nil, errEmptyHandshake
	default:
		return nil, config.RedactErr(fmt.Errorf("dial hub: %w", err))
	}
}

func isEmptyHandshake(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET)
}
