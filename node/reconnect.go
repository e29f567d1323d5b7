package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/config"
)

// errEmptyHandshake means the server closed the socket before any HTTP
// response: the real server does that for a bad key, a bad path and while
// draining, and a client cannot tell these apart (protocol.md §1.3).
var errEmptyHandshake = errors.New("server closed the connection before answering the handshake")

// connectLoop dials, runs a session, and backs off, until ctx is cancelled.
// It never gives up: a node on a laptop outlives many server restarts.
func (n *Node) connectLoop(ctx context.Context, drained <-chan struct{}) {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = n.timings.backoffInitial
	bo.MaxInterval = n.timings.backoffMax
	bo.Multiplier = 2
	bo.RandomizationFactor = 0.5
	bo.MaxElapsedTime = 0
	bo.Reset()

	emptyHandshakes := 0
	hinted := false
	for ctx.Err() == nil {
		n.state.update(func(s *ConnState) { s.Phase = PhaseConnecting; s.RetryAt = time.Time{} })
		st := n.settings()
		conn, err := n.dial(ctx, st)
		if err == nil {
			emptyHandshakes = 0
			started := time.Now()
			n.state.update(func(s *ConnState) {
				s.Phase = PhaseConnected
				s.ServerID = ""
				s.Attempt = 0
				s.Sessions++
			})
			n.log.Info().Str("hub", config.RedactedURL(st.hubURL)).Msg("connected")
			err = newSession(n, conn, st).run(ctx, drained)
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errRestartRequested) {
				n.log.Info().Msg("reconnecting so the server sees the new tool set")
				continue
			}
			if time.Since(started) >= n.timings.stableAfter {
				bo.Reset()
			}
			n.log.Warn().Err(err).Dur("up", time.Since(started).Round(time.Millisecond)).Msg("connection lost")
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
		wait := bo.NextBackOff()
		msg := err.Error()
		n.state.update(func(s *ConnState) {
			s.Phase = PhaseBackoff
			s.Attempt++
			s.RetryAt = time.Now().Add(wait)
			s.LastError = msg
		})
		n.log.Info().Err(err).Dur("retry_in", wait.Round(time.Millisecond)).Msg("will reconnect")
		if !n.sleep(ctx, wait) {
			return
		}
	}
}

// sleep waits d, or less when ctx ends (false) or `vcpnode reconnect` asks (true).
func (n *Node) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-n.reconnect:
		n.log.Info().Msg("reconnecting now, as asked")
		return true
	case <-t.C:
		return true
	}
}

// dial opens the WebSocket. Every error it returns is redacted.
func (n *Node) dial(ctx context.Context, st *settings) (*websocket.Conn, error) {
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: st.cfg.Hub.HandshakeTimeout.D(),
	}
	conn, resp, err := d.DialContext(ctx, st.hubURL.String(), nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err == nil {
		return conn, nil
	}
	switch {
	case resp != nil:
		return nil, fmt.Errorf("handshake refused with HTTP %s", resp.Status)
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
