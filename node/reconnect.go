package node

import (
	"context"
	"errors"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/hubconn"
)

// connectLoop dials, runs a session, and waits between attempts, until ctx
// is cancelled. It never gives up: a node on a laptop outlives many server
// restarts. The wait schedule starts over as soon as a connection is
// accepted and register_tools sent, however short the session then is; the
// connection limiter, not slow retries, protects the server from a node
// whose sessions keep dying.
func (n *Node) connectLoop(ctx context.Context, drained <-chan struct{}) {
	clk := n.timings.clock
	sched := hubconn.NewRetrySchedule(n.timings.retry, clk.Now, n.timings.jitter)
	limit := hubconn.NewConnLimiter(n.timings.connsPerMinute, n.timings.connBurst, clk.Now)

	emptyHandshakes := 0
	hinted, limited := false, false
	for ctx.Err() == nil {
		if d := limit.Delay(); d > 0 {
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
		if hubconn.ReachedServer(err) {
			limit.Take()
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
				sched.Reset()
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
			if errors.Is(err, hubconn.ErrEmptyHandshake) {
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
		wait := sched.Next()
		msg := err.Error()
		n.state.update(func(s *ConnState) {
			s.Phase = PhaseBackoff
			s.Attempt = sched.Attempts()
			s.RetryAt = clk.Now().Add(wait)
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

// dial opens the WebSocket. Every error it returns is redacted.
func (n *Node) dial(ctx context.Context, st *settings) (*hubconn.Conn, error) {
	return hubconn.Dial(ctx, st.hubURL, hubconn.Options{
		HandshakeTimeout: st.cfg.Hub.HandshakeTimeout.D(),
		Liveness:         liveness(st.cfg.Hub),
		ReadLimit:        n.timings.readLimit,
	})
}

// liveness is the ping and pong settings of every connection to the hub.
func liveness(hub config.HubConfig) hubconn.Liveness {
	return hubconn.Liveness{PingInterval: hub.PingInterval.D(), PongTimeout: hub.PongTimeout.D()}
}
