package observer

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/toolhost"
)

// maxObserverFrame is the largest broadcast kept; a larger one is read to
// its end and dropped, the connection kept.
const maxObserverFrame = 1 << 20

// Settings is what one attempt connects with: the server's base URL, the
// key (never log it), the device name the server's replay cache knows this
// client by, and the [hub] timeouts.
type Settings struct {
	Base, Key, Device string
	Hub               config.HubConfig
}

// Timings are the reconnect schedule and the connection limiter's rate.
type Timings struct {
	Retry            hubconn.RetryPolicy
	Jitter           func() float64 // uniform in [0, 1); nil: math/rand
	PerMinute, Burst int            // connections that reach the server; 0: unlimited
}

// DefaultTimings are the node's schedule and limits.
func DefaultTimings() Timings {
	return Timings{Retry: hubconn.DefaultRetryPolicy(), PerMinute: hubconn.DefaultConnsPerMinute, Burst: hubconn.DefaultConnBurst}
}

// Options are the hooks a daemon adds.
type Options struct {
	// Notify, if set, learns each new server approval (a desktop notifier).
	Notify func(Approval)
	// Guard, if set, runs each connection's loop; the node's turns a panic
	// into a fatal stop of its Run.
	Guard func(what string, f func())
	// AuthFile, if set, keeps the way each channel took the key for the
	// next start ([hub] auth = "auto"; hubconn.Remembered's File).
	AuthFile string
}

// Set owns the observer connections, the server approvals they bring and
// the events they publish. A daemon has one; `vcpnode watch` without a
// daemon makes its own (Watch).
type Set struct {
	log       zerolog.Logger
	settings  func() Settings
	retry     hubconn.RetryPolicy
	jitter    func() float64
	perMinute int
	burst     int
	events    *events.Log
	approvals *serverApprovals
	warnings  *toolhost.WarnLimiter
	notify    func(Approval) // nil: none
	guard     func(what string, f func())
	authFile  string

	mu    sync.Mutex
	conns map[string]*observerConn // by channel
	order []string
	// changed is closed and replaced whenever a connection's phase changes.
	changed chan struct{}
}

// observerConn is one channel's state; conn is set while connected.
type observerConn struct {
	channel string
	mu      sync.Mutex
	st      controlapi.ObserverStatus
	conn    *hubconn.Conn
	writeMu sync.Mutex // one data-frame writer at a time
	dedupe  replayFilter
	// kick cuts the next backoff wait short (Kick); one pending kick.
	kick    chan struct{}
	set     *Set
	authWay hubconn.Remembered // the way the key was taken last
}

// New makes the connections' owner; Run starts them. Every event goes
// to evlog; settings is read at each attempt.
func New(log zerolog.Logger, evlog *events.Log, settings func() Settings, t Timings, opts Options) *Set {
	o := &Set{
		log: log, settings: settings, retry: t.Retry, jitter: t.Jitter,
		perMinute: t.PerMinute, burst: t.Burst, notify: opts.Notify, guard: opts.Guard, authFile: opts.AuthFile,
		events: evlog, warnings: toolhost.NewWarnLimiter(toolhost.WarnEvery, toolhost.WarnBurst, time.Now),
		conns: map[string]*observerConn{}, changed: make(chan struct{}),
	}
	o.approvals = newServerApprovals(evlog)
	return o
}

// Run keeps one connection per channel until ctx ends. Call it once.
func (o *Set) Run(ctx context.Context, channels []string) {
	var wg sync.WaitGroup
	for _, ch := range channels {
		c := &observerConn{channel: ch, st: controlapi.ObserverStatus{Channel: ch, Phase: controlapi.PhaseConnecting, Since: time.Now()},
			kick: make(chan struct{}, 1), set: o}
		c.authWay.OnSaveError = func(err error) {
			o.log.Warn().Err(err).Str("channel", ch).Msg("the way the server took the key is not remembered for the next start")
		}
		o.mu.Lock()
		c.authWay.File = o.authFile // under o.mu: SetAuthFile reaches every channel
		o.conns[ch] = c
		o.order = append(o.order, ch)
		o.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.guard == nil {
				o.loop(ctx, c)
				return
			}
			o.guard("observer "+c.channel, func() { o.loop(ctx, c) })
		}()
	}
	wg.Wait()
	o.approvals.close()
	o.warnings.Flush(o.log)
}

// SetAuthFile makes path the file each channel keeps its way in from now
// on (a reload moved the state directory; hubconn.Remembered.SetFile).
func (o *Set) SetAuthFile(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.authFile = path
	for _, c := range o.conns {
		c.authWay.SetFile(path)
	}
}

// Statuses lists the connections in config order.
func (o *Set) Statuses() []controlapi.ObserverStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]controlapi.ObserverStatus, 0, len(o.order))
	for _, ch := range o.order {
		c := o.conns[ch]
		c.mu.Lock()
		out = append(out, c.st)
		c.mu.Unlock()
	}
	return out
}

func (c *observerConn) update(f func(*controlapi.ObserverStatus)) {
	c.mu.Lock()
	old := c.st.Phase
	f(&c.st)
	moved := c.st.Phase != old
	if moved {
		c.st.Since = time.Now()
	}
	c.mu.Unlock()
	if moved {
		c.set.mu.Lock()
		close(c.set.changed)
		c.set.changed = make(chan struct{})
		c.set.mu.Unlock()
	}
}

// Kick makes every channel waiting to reconnect try now: the node calls
// it when its own connection to the server was just accepted, so a server
// that restarted finds the observers back as soon as it is.
func (o *Set) Kick() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.conns {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// WaitConnected waits until channel is connected, ctx ends (its error), or
// the channel is not configured (an error at once).
func (o *Set) WaitConnected(ctx context.Context, channel string) error {
	for {
		o.mu.Lock()
		c, changed := o.conns[channel], o.changed
		o.mu.Unlock()
		if c == nil {
			return fmt.Errorf("the %s observer channel is not running", channel)
		}
		c.mu.Lock()
		up := c.st.Phase == controlapi.PhaseConnected
		c.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// loop dials, serves and waits, with the retry schedule and
// connection limiter, until ctx ends.
func (o *Set) loop(ctx context.Context, c *observerConn) {
	sched := hubconn.NewRetrySchedule(o.retry, time.Now, o.jitter)
	limit := hubconn.NewConnLimiter(o.perMinute, o.burst, time.Now)
	log := o.log.With().Str("channel", c.channel).Logger()
	for ctx.Err() == nil {
		if d := limit.Delay(); d > 0 {
			c.update(func(s *controlapi.ObserverStatus) {
				s.Phase = controlapi.PhaseBackoff
				at := time.Now().Add(d)
				s.RetryAt = &at
			})
			if !sleepCtx(ctx, d) {
				break
			}
			continue
		}
		c.update(func(s *controlapi.ObserverStatus) { s.Phase = controlapi.PhaseConnecting; s.RetryAt = nil })
		st := o.settings()
		u, err := config.ObserverURL(st.Base, st.Key, c.channel, st.Device)
		var conn *hubconn.Conn
		var way string
		if err == nil {
			// The node's [hub] auth, remembered per channel as the node does.
			e := hubconn.Endpoint{Keyed: u, Keyless: config.KeylessURL(u), Key: st.Key}
			conn, way, err = hubconn.DialAuth(ctx, e, st.Hub.Auth, &c.authWay, hubconn.Options{
				HandshakeTimeout: st.Hub.HandshakeTimeout.D(),
				Liveness:         hubconn.LivenessOf(st.Hub),
				ReadLimit:        config.ServerFrameLimit,
			})
		}
		if hubconn.ReachedServer(err) {
			limit.Take()
		}
		if err == nil {
			sched.Reset()
			c.update(func(s *controlapi.ObserverStatus) { s.Auth = way })
			log.Info().Str("hub", config.RedactedURL(u)).Str("auth", way).Msg("observer connected")
			err = o.serve(ctx, c, conn, st.Hub)
			if ctx.Err() != nil {
				break
			}
			log.Warn().Err(err).Msg("observer connection lost")
		} else if ctx.Err() != nil {
			break
		}
		wait := sched.Next()
		msg := config.Redact(err.Error())
		c.update(func(s *controlapi.ObserverStatus) {
			s.Phase = controlapi.PhaseBackoff
			s.Attempt = sched.Attempts()
			at := time.Now().Add(wait)
			s.RetryAt = &at
			s.LastError = msg
		})
		log.Debug().Str("error", msg).Dur("retry_in", wait.Round(time.Millisecond)).Msg("observer will reconnect")
		if !sleepOrKick(ctx, wait, c.kick) {
			break
		}
	}
	c.update(func(s *controlapi.ObserverStatus) { s.Phase = controlapi.PhaseStopped; s.RetryAt = nil })
}

// sleepOrKick waits d, cut short by a kick (true) or ctx (false); a nil
// kick never comes.
func sleepOrKick(ctx context.Context, d time.Duration, kick <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-kick:
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) bool { return sleepOrKick(ctx, d, nil) }

// serve reads broadcasts until the connection fails or ctx ends. The
// client pings every ping_interval; silence past pong_timeout more ends it.
func (o *Set) serve(ctx context.Context, c *observerConn, conn *hubconn.Conn, hub config.HubConfig) error {
	defer conn.Close()
	c.mu.Lock()
	c.conn = conn
	c.dedupe.reconnected(time.Now())
	c.mu.Unlock()
	// Connected only now: whoever sees it can answer on this connection.
	c.update(func(s *controlapi.ObserverStatus) { s.Phase = controlapi.PhaseConnected; s.Attempt = 0; s.Sessions++ })
	defer func() {
		c.mu.Lock()
		c.conn = nil
		c.mu.Unlock()
	}()

	stop := make(chan struct{})
	pingerDone := make(chan struct{})
	go func() {
		defer close(pingerDone)
		t := time.NewTicker(hub.PingInterval.D())
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if conn.Ping() != nil {
					conn.Close()
					return
				}
			case <-ctx.Done():
				_ = conn.SendClose("node stopping", time.Second)
				conn.Close()
				return
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-pingerDone }()

	for {
		r, err := conn.NextReader()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(r, maxObserverFrame+1))
		if err != nil {
			return conn.ReadError(err)
		}
		if len(data) > maxObserverFrame {
			n, err := io.Copy(io.Discard, r)
			if err != nil {
				return conn.ReadError(err)
			}
			o.warnings.Warn(o.log, "observer-large", func(e *zerolog.Event) {
				e.Str("channel", c.channel).Int64("bytes", int64(len(data))+n).Int("limit", maxObserverFrame).
					Msg("observer broadcast too large: dropped")
			})
			conn.Alive()
			continue
		}
		conn.Alive()
		o.handle(c, data)
	}
}

// write sends one data frame on the channel's current connection.
func (o *Set) write(channel string, data []byte) error {
	o.mu.Lock()
	c := o.conns[channel]
	o.mu.Unlock()
	if c == nil {
		return fmt.Errorf("the %s observer channel is not configured ([observer] channels)", channel)
	}
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("not connected to the server's %s channel right now (vcpnode status shows it); try again once it is", channel)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := conn.WriteText(data, hubconn.ControlWait); err != nil {
		conn.Close() // the reader notices and the loop reconnects
		return fmt.Errorf("send on %s: %w", channel, err)
	}
	return nil
}
