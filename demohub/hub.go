package demohub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

const (
	// EndpointPrefix is the path the real server accepts, followed by the raw key.
	EndpointPrefix = "/vcp-distributed-server/VCP_Key="
	// DefaultReadLimit is the real server's maxPayload (the ws library default).
	DefaultReadLimit = 100 << 20

	ackMessage = "WebSocket connection successful for DistributedServer."
	// closeGrace bounds how long a closing connection waits for the node.
	closeGrace = 2 * time.Second
	// defaultWriteTimeout bounds a write whose context has no deadline.
	defaultWriteTimeout = 10 * time.Second
	handshakeTimeout    = 10 * time.Second
)

var (
	// ErrClosed is returned by waits on a hub that has been closed.
	ErrClosed = errors.New("demohub: hub closed")
	// ErrConnClosed is returned by waits and sends on a connection that has ended.
	ErrConnClosed = errors.New("demohub: connection ended")
)

// Options configure a Hub. Only Key is required.
type Options struct {
	// Key is the key the node must present in the path. It is never logged.
	Key string
	// NoAck skips connection_ack, like servers older than 2026-02-20.
	NoAck bool
	// NoPong makes every new connection ignore the node's pings (see Conn.StopPonging).
	NoPong bool
	// NoHistory stops recording Received/Sent (long benchmarks). WaitFor
	// still works; frames nobody consumes (other than Call results) are kept.
	NoHistory bool
	// ReadLimit is the largest frame accepted from the node; a larger one
	// closes the connection with 1009. Zero or less means DefaultReadLimit.
	ReadLimit int64
	// OnFrame, if set, sees every data frame in both directions: received
	// ones before they can be consumed, sent ones just before they are
	// written. Calls are serialised; it must not call back into the Hub or
	// the Conn, and should return quickly (the reader waits for it).
	OnFrame func(Frame)
	// ReplayDelay is how long a known device must stay connected to VCPlog
	// before missed broadcasts are replayed; zero means 3 s, as the server.
	ReplayDelay time.Duration
	// ReplayInterval spaces replayed broadcasts; zero means 80 ms.
	ReplayInterval time.Duration
	// ReplayOverlap re-sends this many broadcasts the device already got
	// before the ones it missed, as a server unsure of a dead socket would.
	ReplayOverlap int
	// Auth is how the hub takes the key: AuthPath (the default),
	// AuthHeader, AuthBoth or AuthStripHeader (auth.go).
	Auth string
	// Bridge, if set, answers the VCPToolBridge frames (bridge.go).
	Bridge *Bridge
	// Logf, if set, receives lifecycle lines (connections, refusals), never
	// frames or the key. It is called from several goroutines, and never
	// after Close has returned.
	Logf func(format string, args ...any)
}

// Hub is a running fake server. Its methods are safe for concurrent use.
type Hub struct {
	opts     Options
	addr     string // 127.0.0.1:PORT, kept across Stop/Resume
	upgrader websocket.Upgrader

	wg        sync.WaitGroup // serve loops, handlers, connection readers
	observeMu sync.Mutex     // serialises OnFrame
	connSeq   atomic.Uint64
	requestN  atomic.Uint64
	pingN     atomic.Uint64

	mu         sync.Mutex
	closed     bool
	srv        *http.Server // nil while stopped
	serveDone  chan struct{}
	conns      map[*Conn]struct{} // live connections
	acceptQ    []*Conn
	refuseLeft int // <0: refuse until told otherwise
	okCount    int
	refused    int
	changes    changes       // wakes waitUntil on every state change
	obs        observerState // observer.go
	// bridgeTasks maps the bridge's asynchronous tasks to the connection
	// that started them; bridgeCtx ends the bridge's runs at Close.
	bridgeTasks   map[string]*Conn
	bridgePlugins []BridgePlugin // SetBridgePlugins, once bridgeSet
	bridgeSet     bool
	bridgeCtx     context.Context
	bridgeStop    context.CancelFunc
}

// Start listens on 127.0.0.1 on a free port and serves until Close.
func Start(opts Options) (*Hub, error) {
	if opts.Key == "" {
		return nil, errors.New("demohub: Options.Key is empty: set the key the node will present")
	}
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = DefaultReadLimit
	}
	if opts.ReplayDelay <= 0 {
		opts.ReplayDelay = 3 * time.Second
	}
	if opts.ReplayInterval <= 0 {
		opts.ReplayInterval = 80 * time.Millisecond
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demohub: listen on 127.0.0.1: %w", err)
	}
	h := &Hub{
		opts: opts,
		addr: ln.Addr().String(),
		upgrader: websocket.Upgrader{
			HandshakeTimeout: handshakeTimeout,
			// The real server has no Origin check.
			CheckOrigin: func(*http.Request) bool { return true },
		},
		conns:   make(map[*Conn]struct{}),
		changes: newChanges(),
	}
	h.bridgeCtx, h.bridgeStop = context.WithCancel(context.Background())
	h.mu.Lock()
	h.serveLocked(ln)
	h.mu.Unlock()
	return h, nil
}

func (h *Hub) serveLocked(ln net.Listener) {
	srv := &http.Server{
		Handler:           http.HandlerFunc(h.handle),
		ReadHeaderTimeout: handshakeTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	done := make(chan struct{})
	h.srv, h.serveDone = srv, done
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(done)
		_ = srv.Serve(ln) // returns when the listener is closed by Stop or Close
	}()
}

// Addr is "127.0.0.1:PORT".
func (h *Hub) Addr() string { return h.addr }

// BaseURL is what a node is configured with: "http://127.0.0.1:PORT".
func (h *Hub) BaseURL() string { return "http://" + h.addr }

// WSURL is the endpoint with the key redacted, for logs and demo output.
func (h *Hub) WSURL() string { return "ws://" + h.addr + EndpointPrefix + "***" }

// DialURL is the full endpoint including the key, for raw test clients.
// Never print it.
func (h *Hub) DialURL() string { return "ws://" + h.addr + EndpointPrefix + h.opts.Key }

func (h *Hub) logf(format string, args ...any) {
	if h.opts.Logf != nil {
		h.opts.Logf(format, args...)
	}
}

func (h *Hub) observe(f Frame) {
	if h.opts.OnFrame == nil {
		return
	}
	h.observeMu.Lock()
	defer h.observeMu.Unlock()
	h.opts.OnFrame(f)
}

// notifyLocked wakes every waiter; h.mu must be held.
func (h *Hub) notifyLocked() { h.changes.notify() }

// waitUntil blocks until cond (called with h.mu held) is true, the hub is
// closed, or ctx is done.
func (h *Hub) waitUntil(ctx context.Context, what string, cond func() bool) error {
	return h.changes.wait(ctx, "waiting for "+what, &h.mu, cond, func() error {
		if h.closed {
			return fmt.Errorf("%w while waiting for %s", ErrClosed, what)
		}
		return nil
	})
}

// Close closes the listener and every connection abruptly, and waits for all
// of the hub's goroutines. Waiters return ErrClosed or ErrConnClosed.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return
	}
	h.closed = true
	h.bridgeStop()
	srv := h.srv
	h.srv = nil
	conns := h.liveLocked()
	observers := h.liveObserversLocked()
	h.notifyLocked()
	h.mu.Unlock()

	if srv != nil {
		_ = srv.Close()
	}
	for _, c := range conns {
		c.Drop()
	}
	for _, o := range observers {
		o.Drop()
	}
	h.wg.Wait()
}

// Stop simulates a server shutting down: the listener closes (new dials are
// refused by the OS) and every connection gets a close frame without a code,
// as the real server's shutdown sends. It waits for the nodes to answer until
// ctx is done, then drops whatever is left. Resume listens again.
func (h *Hub) Stop(ctx context.Context) {
	h.mu.Lock()
	if h.closed || h.srv == nil {
		h.mu.Unlock()
		return
	}
	srv, serveDone := h.srv, h.serveDone
	h.srv = nil
	conns := h.liveLocked()
	observers := h.liveObserversLocked()
	h.notifyLocked()
	h.mu.Unlock()

	_ = srv.Close()
	<-serveDone // Serve returns as soon as its listener is closed
	for _, o := range observers {
		o.Drop() // the observer side needs no orderly close for any test
	}
	closeAll(ctx, conns, websocket.CloseNoStatusReceived, "")
}

// Resume listens again on the same address after Stop. It fails if the hub
// is closed or another process took the port meanwhile.
func (h *Hub) Resume() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	if h.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", h.addr)
	if err != nil {
		return fmt.Errorf("demohub: listen again on %s: %w", h.addr, err)
	}
	h.serveLocked(ln)
	h.notifyLocked()
	return nil
}

// Restart is Stop followed by Resume: the nodes see their connections
// closed, then find the server listening again on the same port.
func (h *Hub) Restart(ctx context.Context) error {
	h.Stop(ctx)
	return h.Resume()
}

// Accept returns the next node connection, in the order they were made,
// including ones that have already ended.
func (h *Hub) Accept(ctx context.Context) (*Conn, error) {
	var c *Conn
	err := h.waitUntil(ctx, "a node connection", func() bool {
		if len(h.acceptQ) == 0 {
			return false
		}
		c = h.acceptQ[0]
		h.acceptQ = h.acceptQ[1:]
		return true
	})
	return c, err
}

// Conns is a snapshot of the connections that are still open, oldest first.
func (h *Hub) Conns() []*Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.liveLocked()
}

func (h *Hub) liveLocked() []*Conn {
	out := make([]*Conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Conn) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// RefuseHandshakes makes the next n upgrade attempts fail like a bad key:
// the socket is closed before any HTTP response. n < 0 refuses until told
// otherwise; n == 0 stops refusing.
func (h *Hub) RefuseHandshakes(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refuseLeft = n
}

// Handshakes counts upgrade attempts that became connections and those refused.
func (h *Hub) Handshakes() (ok, refused int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.okCount, h.refused
}

// WaitHandshakes blocks until cond(ok, refused) holds, the hub closes, or ctx is done.
func (h *Hub) WaitHandshakes(ctx context.Context, cond func(ok, refused int) bool) error {
	return h.waitUntil(ctx, "handshakes", func() bool { return cond(h.okCount, h.refused) })
}

// newClientID mimics the server's "<ms base36>-<7 base36 chars>" form, with
// a sequence number instead of random characters so ids are unique.
func (h *Hub) newClientID() (string, uint64) {
	n := h.connSeq.Add(1)
	seq := strconv.FormatUint(n, 36)
	if len(seq) < 7 {
		seq = strings.Repeat("0", 7-len(seq)) + seq
	}
	return strconv.FormatInt(time.Now().UnixMilli(), 36) + "-" + seq, n
}

// track registers an upgraded connection so Close and Stop reach it; it
// reports false if the hub is closed or stopped.
func (h *Hub) track(c *Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.srv == nil {
		return false
	}
	h.conns[c] = struct{}{}
	h.okCount++
	h.notifyLocked()
	return true
}

// publish makes a connection visible to Accept, once its ack is on the wire.
func (h *Hub) publish(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.acceptQ = append(h.acceptQ, c)
		h.notifyLocked()
	}
}

func (h *Hub) untrack(c *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
	h.notifyLocked()
}
