package hubsession

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/hubconn"
)

// connectLoop dials, runs a session, and waits between attempts, until ctx
// is cancelled. It never gives up: a node on a laptop outlives many server
// restarts. The wait schedule starts over as soon as a connection is
// accepted and register_tools sent, however short the session then is; the
// connection limiter, not slow retries, protects the server from a node
// whose sessions keep dying.
func (e *Engine) connectLoop(ctx context.Context, drained <-chan struct{}) {
	clk := e.timings.Clock
	sched := hubconn.NewRetrySchedule(e.timings.Retry, clk.Now, e.timings.Jitter)
	limit := hubconn.NewConnLimiter(e.timings.ConnsPerMinute, e.timings.ConnBurst, clk.Now)

	emptyHandshakes := 0
	hinted, limited := false, false
	// The URL (with its key) of the last session that registered, and when
	// it ended: see defaultDroppedHandshakeGrace.
	var lastRegURL string
	var lastRegEnd time.Time
	// What the key file is compared with during a backoff: the content the
	// settings' key was read from, or the content of a change already
	// acted on whose re-read failed (so it does not wake every wait).
	var keyBase struct {
		st  *Settings
		sum [sha256.Size]byte
	}
	for ctx.Err() == nil {
		if d := limit.Delay(); d > 0 {
			if !limited {
				limited = true
				e.log.Warn().Int("per_minute", e.timings.ConnsPerMinute).Dur("wait", d.Round(time.Millisecond)).
					Msg("connecting too often: waiting before the next attempt to spare the server")
			}
			e.state.update(func(s *connState) { s.Phase = controlapi.PhaseBackoff; s.RetryAt = clk.Now().Add(d) })
			if !e.sleep(ctx, d) {
				return
			}
			continue
		}
		limited = false
		e.state.update(func(s *connState) { s.Phase = controlapi.PhaseConnecting; s.RetryAt = time.Time{} })
		st := e.host.Settings()
		conn, err := e.dial(ctx, st)
		if hubconn.ReachedServer(err) {
			limit.Take()
		}
		if err == nil {
			emptyHandshakes, hinted = 0, false
			started := clk.Now()
			e.state.update(func(s *connState) {
				s.Phase = controlapi.PhaseConnected
				s.ServerID = ""
				s.Attempt = 0
				s.HandshakesDropped = 0
				s.Sessions++
			})
			e.log.Info().Str("hub", config.RedactedURL(st.HubURL)).Msg("connected")
			sess := newSession(e, conn, st)
			soakBrokenSessionStarted(sess)
			err = sess.run(ctx, drained)
			e.warnings.Flush(e.log)
			if sess.registered {
				sched.Reset()
				lastRegURL, lastRegEnd = st.HubURL.String(), clk.Now()
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errRestartRequested) {
				e.log.Info().Msg("reconnecting so the server sees the new tool set")
				continue
			}
			e.log.Warn().Err(err).Dur("up", clk.Now().Sub(started).Round(time.Millisecond)).Msg("connection lost")
		} else {
			if ctx.Err() != nil {
				return
			}
			recent := st.HubURL.String() == lastRegURL && clk.Now().Sub(lastRegEnd) < e.timings.DroppedHandshakeGrace
			switch {
			case errors.Is(err, hubconn.ErrEmptyHandshake) && recent:
				// The server took this key and path moments ago: an
				// outage behind a proxy, not a wrong key. Ordinary schedule.
			case errors.Is(err, hubconn.ErrEmptyHandshake):
				emptyHandshakes++
				if emptyHandshakes >= e.timings.EmptyHandshakesBeforeHint && !hinted {
					hinted = true
					e.log.Warn().Int("attempts", emptyHandshakes).Dur("backing_off_to", maxDroppedHandshakeWait).
						Msg(droppedHandshakesHint)
				}
			default:
				emptyHandshakes = 0
			}
		}
		wait := sched.Next()
		// Handshakes the server drops before answering are a wrong key or
		// path far more often than an outage: past a few in a row they back
		// off to a minute, sparing the server a log line every half second.
		// A reload, `vcpnode reconnect` or a changed key file cuts it short.
		dropped := emptyHandshakes >= e.timings.EmptyHandshakesBeforeHint
		if dropped {
			wait = max(wait, droppedHandshakeWait(emptyHandshakes-e.timings.EmptyHandshakesBeforeHint))
		}
		msg := err.Error()
		e.state.update(func(s *connState) {
			s.Phase = controlapi.PhaseBackoff
			s.Attempt = sched.Attempts()
			s.RetryAt = clk.Now().Add(wait)
			s.LastError = msg
			s.HandshakesDropped = emptyHandshakes
		})
		e.log.Info().Err(err).Dur("retry_in", wait.Round(time.Millisecond)).Msg("will reconnect")
		var keyFile string
		if dropped {
			keyFile = st.Config.Hub.KeyFile
		}
		if keyBase.st != st {
			keyBase.st, keyBase.sum = st, st.KeyFileSum
		}
		if !e.sleepWatching(ctx, wait, keyFile, &keyBase.sum) {
			return
		}
	}
}

// DroppedHandshakeCauses are what handshakes a server drops before any
// HTTP answer mean, most likely first; the engine's warning and the CLI's
// status and reconnect say it. A server before the key-less endpoint drops
// every Authorization-header handshake as it drops a wrong key.
const DroppedHandshakeCauses = "likely a wrong key, a wrong path in hub.url, " +
	"[hub] auth = \"header\" with a server that takes the key only in the path (\"auto\" falls back to it), " +
	"a proxy in between, or a restarting server"

// droppedHandshakesHint is the one warning for handshakes the server drops
// before any HTTP answer.
const droppedHandshakesHint = "the server dropped several handshakes in a row before answering: " +
	DroppedHandshakeCauses + "; " +
	"backing off such attempts to one a minute (vcpnode reconnect, a reload or a changed key file retries at once)"

// defaultDroppedHandshakeGrace is how long after a session that registered
// handshakes dropped with the same URL and key follow the ordinary schedule.
// A TCP proxy in front of a server that is down (an SSH tunnel, stunnel,
// a load balancer in TCP mode) accepts and closes every connection; as the
// key and path were accepted just before, that is an outage, and backing
// off to a minute would keep the node away long after the server is back.
// A key the server stops accepting is backed off from a minute later.
const defaultDroppedHandshakeGrace = time.Minute

// maxDroppedHandshakeWait caps the wait between dropped handshakes.
const maxDroppedHandshakeWait = time.Minute

// droppedHandshakeWait is the wait after the k-th dropped handshake past
// the hint: 5 s, doubling, up to a minute.
func droppedHandshakeWait(k int) time.Duration {
	d := 5 * time.Second
	for ; k > 0 && d < maxDroppedHandshakeWait; k-- {
		d *= 2
	}
	return min(d, maxDroppedHandshakeWait)
}

// sleepWatching is sleep that also ends (true) when keyFile, if not empty,
// differs from *was: the node then re-reads its config so the next attempt
// uses it. *was is the content the key in use was read from, so a change
// made at any moment since (during the attempt, before this wait) ends the
// wait at once; it becomes the content seen, so that a change whose
// re-read fails wakes one wait, not every one.
func (e *Engine) sleepWatching(ctx context.Context, d time.Duration, keyFile string, was *[sha256.Size]byte) bool {
	if keyFile == "" {
		return e.sleep(ctx, d)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan [sha256.Size]byte, 1)
	watched := make(chan struct{})
	base := *was
	go func() {
		defer close(watched)
		if now, ok := watchFile(ctx, keyFile, base, e.timings.KeyFilePoll); ok {
			changed <- now
			e.Reconnect()
		}
	}()
	ok := e.sleep(ctx, d)
	cancel()
	<-watched
	select {
	case now := <-changed:
		*was = now
		select {
		case <-e.reconnect: // the watch's own, if the wait ended otherwise
		default:
		}
		e.log.Info().Msg("the key file changed: re-reading the config and connecting now")
		if err := e.host.Rescan(); err != nil {
			e.log.Warn().Err(err).Msg("cannot re-read the config after the key file changed")
		}
	default:
	}
	return ok
}

// FileSum is the content of path, hashed: what Settings.KeyFileSum holds.
func FileSum(path string) [sha256.Size]byte {
	data, _ := os.ReadFile(path) // a missing file is a content too
	return sha256.Sum256(data)
}

// watchFile returns path's content (hashed) and true once it differs from
// was, checking now and then every poll; false when ctx ends first.
func watchFile(ctx context.Context, path string, was [sha256.Size]byte, poll time.Duration) ([sha256.Size]byte, bool) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if now := FileSum(path); now != was {
			return now, true
		}
		select {
		case <-ctx.Done():
			return was, false
		case <-t.C:
		}
	}
}

// sleep waits d, or less when ctx ends (false) or `vcpnode reconnect` asks (true).
func (e *Engine) sleep(ctx context.Context, d time.Duration) bool {
	fire, stop := e.timings.Clock.Timer(d)
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-e.reconnect:
		e.log.Info().Msg("reconnecting now, as asked")
		return true
	case <-fire:
		return true
	}
}

// dial opens the WebSocket, with the key where [hub] auth says (the way
// that worked is in the state). Every error it returns is redacted.
func (e *Engine) dial(ctx context.Context, st *Settings) (*hubconn.Conn, error) {
	ep := hubconn.Endpoint{Keyed: st.HubURL, Keyless: config.KeylessURL(st.HubURL), Key: st.Key}
	c, way, err := hubconn.DialAuth(ctx, ep, st.Config.Hub.Auth, e.authWay, hubconn.Options{
		HandshakeTimeout: st.Config.Hub.HandshakeTimeout.D(),
		Liveness:         hubconn.LivenessOf(st.Config.Hub),
		ReadLimit:        e.timings.ReadLimit,
	})
	if err == nil {
		recalled := e.authWay.Recalled()
		e.state.update(func(s *connState) { s.Auth, s.AuthRemembered = way, recalled })
	}
	return c, err
}

// Timings are the reconnect loop's and the session's intervals and
// bounds; tests shorten them.
type Timings struct {
	Retry                     hubconn.RetryPolicy // waits between attempts (hubconn/backoff.go)
	ConnsPerMinute, ConnBurst int                 // connections that reach the server; 0: unlimited
	Clock                     hubconn.Clock
	Jitter                    func() float64  // uniform in [0, 1); nil: math/rand
	Reregister                []time.Duration // re-send register_tools this long after connecting
	CloseWait                 time.Duration   // how long to wait for the server's close reply
	EmptyHandshakesBeforeHint int
	DroppedHandshakeGrace     time.Duration // see defaultDroppedHandshakeGrace
	KeyFilePoll               time.Duration // how often a dropped-handshake backoff checks the key file
	ReadLimit                 int64         // largest frame accepted from the server

	// SessionCallGrace is how long calls of an ended connection may still
	// finish before they are cancelled.
	SessionCallGrace time.Duration

	// BeforeClose, if set, runs when a session has decided to close and
	// before it stops taking calls: a seam for tests of that window.
	BeforeClose func()
	// DecodeBudget bounds the bytes of frames read but not yet decoded;
	// a frame that finds no room within BusyWait (at most half of what is
	// left of the liveness window) is refused as "node busy".
	// Above ReadLimit, so that a frame the server may send always fits.
	DecodeBudget int64
	BusyWait     time.Duration
	// BeforeDecode, if set, runs on the decoder goroutine before each frame
	// is decoded: a seam for tests that hold a decode to watch the reader.
	BeforeDecode func(frameBytes int)
}

// DefaultTimings are the production ones.
func DefaultTimings() Timings {
	return Timings{
		Retry:                     hubconn.DefaultRetryPolicy(),
		ConnsPerMinute:            hubconn.DefaultConnsPerMinute,
		ConnBurst:                 hubconn.DefaultConnBurst,
		Clock:                     hubconn.RealClock{},
		Reregister:                []time.Duration{10 * time.Second, 60 * time.Second},
		CloseWait:                 2 * time.Second,
		EmptyHandshakesBeforeHint: 3,
		DroppedHandshakeGrace:     defaultDroppedHandshakeGrace,
		KeyFilePoll:               time.Second,
		ReadLimit:                 config.ServerFrameLimit,
		SessionCallGrace:          5 * time.Second,
		DecodeBudget:              config.ServerFrameLimit + 4*config.MiB,
		BusyWait:                  5 * time.Second,
	}
}
