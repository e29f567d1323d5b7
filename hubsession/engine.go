// Package hubsession keeps a node connected to its VCP main server: the
// reconnect loop (dial, backoff, the connection limiter, dropped
// handshakes), the session on each connection (register_tools, report_ip,
// placeholder pushes, the callbacks' outbox, execute_tool and cancel_tool,
// results streamed back, the close), and the connection state that
// `vcpnode status` shows.
//
// It knows the node only through Host, the few things it asks of it: the
// settings in force, running a call, the tools to register. hubconn is its
// only way to the socket.
package hubsession

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"net/url"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Settings is what a connection is made with: a snapshot of the config in
// force, never modified. A session keeps the one it was dialed with, so a
// reload never changes a running session underneath it.
type Settings struct {
	Config config.Config
	HubURL *url.URL // carries the key: never log it, use config.RedactedURL
	Key    string   // never log it
	// KeyFileSum is hub.key_file's content (hashed) just before Key was
	// read: what a dropped-handshake backoff compares the file with.
	KeyFileSum [sha256.Size]byte
	Name       string // the serverName the node registers with
}

// Host is what the engine needs from the node.
type Host interface {
	// Settings is the settings in force: what the next connection uses.
	Settings() *Settings
	// Dispatch runs the call the server made of wire (the tool's name on
	// the server, under st) and answers through reply. It returns false,
	// and never replies, when the request id is already in flight.
	Dispatch(ctx context.Context, st *Settings, wire string, call toolhost.Call, reply func(toolhost.Outcome)) bool
	// Cancel cancels a call the server has given up on; true when one was running.
	Cancel(requestID string) bool
	// EndOrigin drops the calls of an ended connection that have not
	// started (toolhost.Dispatcher.EndOrigin) and says how many.
	EndOrigin(o *toolhost.Origin, cause error) (dropped int)
	// Manifests are the tools to register, under their names on the server.
	Manifests(st *Settings) ([]json.RawMessage, error)
	// Capabilities describe this machine in register_tools.
	Capabilities(st *Settings) wsproto.Capabilities
	// LocalIPs are the addresses report_ip sends.
	LocalIPs() ([]string, error)
	// Connected runs on each connection before the tools are registered
	// (the node brings its observer channels back first).
	Connected(ctx context.Context, st *Settings)
	// Outbox is the asynchronous plugins' callbacks store in force.
	Outbox() *outbox.Box
	// Rescan re-reads the config: the key file changed during a backoff.
	Rescan() error
	// Guard runs f, turning a panic in it into the node's fatal stop.
	Guard(what string, f func())
}

// ServerTools takes the bridge frames of each connection (bridge.Client).
type ServerTools interface {
	// Connected is called once per connection, with the way to send on it.
	Connected(send func(wsproto.Message) error)
	// Disconnected fails what waits on the connection that ended.
	Disconnected()
	// Handle takes one bridge frame from the server; false when it
	// belongs to no call or list this connection waits on.
	Handle(m wsproto.Message) bool
	// StatusLost is told of a progress frame (vcp_tool_status) read and
	// refused unhandled because the node was busy decoding earlier ones.
	StatusLost()
	// ResultLost is told of a result frame (vcp_tool_result) for
	// requestID read and refused unhandled because the node was busy: the
	// call waiting on it ends now rather than at its timeout.
	ResultLost(requestID string)
}

// Options are what an Engine is made with besides its Host.
type Options struct {
	Log zerolog.Logger
	// Register is [node] register: false holds register_tools back until Register.
	Register bool
	// Timings are DefaultTimings but in tests.
	Timings Timings
	// Auth remembers the way the key was taken last ([hub] auth); nil: a new one.
	Auth *hubconn.Remembered
	// Feed pushes the placeholder values on each connection.
	Feed *feed.Feed
	// OutboxReady wakes the connected session when a callback was stored.
	OutboxReady <-chan struct{}
	// Bridge takes the server's tool frames; nil: none (they are ignored).
	Bridge ServerTools
}

// Engine keeps the node connected: Run it once.
type Engine struct {
	host     Host
	log      zerolog.Logger
	timings  Timings
	authWay  *hubconn.Remembered
	warnings *toolhost.WarnLimiter // the warnings the server can cause at any rate
	feed     *feed.Feed
	outReady <-chan struct{}
	bridge   ServerTools

	state        *stateBox
	hold         *registerHold
	holdMu       sync.Mutex
	decodeBudget *budget // frames read, not yet decoded (session_read.go)
	reconnect    chan struct{}
	// restart asks the current session to close so the loop reconnects at
	// once: the server cannot update or remove registered tools otherwise.
	restart chan struct{}
	// bg holds goroutines that outlive a session (cancelling its calls
	// after the grace); Wait waits for them.
	bg sync.WaitGroup
}

// New makes an engine; it does no network I/O.
func New(host Host, o Options) *Engine {
	e := &Engine{
		host:      host,
		log:       o.Log,
		timings:   o.Timings,
		authWay:   o.Auth,
		warnings:  toolhost.NewWarnLimiter(toolhost.WarnEvery, toolhost.WarnBurst, time.Now),
		feed:      o.Feed,
		outReady:  o.OutboxReady,
		bridge:    o.Bridge,
		state:     newStateBox(),
		hold:      newRegisterHold(o.Register),
		reconnect: make(chan struct{}, 1),
		restart:   make(chan struct{}, 1),
	}
	if e.authWay == nil {
		e.authWay = &hubconn.Remembered{}
	}
	e.decodeBudget = newBudget(e.timings.DecodeBudget)
	return e
}

// Run keeps the node connected until ctx is cancelled and, after that,
// until drained is closed (every in-flight result sent): see connectLoop.
func (e *Engine) Run(ctx context.Context, drained <-chan struct{}) {
	e.connectLoop(ctx, drained)
}

// Wait waits for the goroutines that outlive a session (the calls of an
// ended connection, cancelled after their grace).
func (e *Engine) Wait() { e.bg.Wait() }

// State returns a snapshot of the connection and a channel closed at the next change.
func (e *Engine) State() (controlapi.ConnectionStatus, <-chan struct{}) { return e.state.get() }

// SetPhase records a phase the node enters outside the loop (stopping, stopped).
func (e *Engine) SetPhase(p controlapi.Phase) {
	e.state.update(func(s *controlapi.ConnectionStatus) { s.Phase = p })
}

// Reconnect cuts a backoff wait short.
func (e *Engine) Reconnect() {
	select {
	case e.reconnect <- struct{}{}:
	default:
	}
}

// Restart makes the connected session close and the loop reconnect at
// once, so the server sees the tools as they are now; while disconnected
// it cuts the backoff short, since the next attempt already uses the new
// settings.
func (e *Engine) Restart() {
	if s, _ := e.state.get(); s.Phase == controlapi.PhaseConnected {
		select {
		case e.restart <- struct{}{}:
		default:
		}
		return
	}
	e.Reconnect()
}

// SameHub says whether two settings connect the same way, as the same node:
// when they do not, a reload makes the session in place reconnect.
func SameHub(a, b *Settings) bool {
	return a.HubURL.String() == b.HubURL.String() && a.Name == b.Name && a.Config.Hub == b.Config.Hub &&
		maps.Equal(a.Config.Node.Labels, b.Config.Node.Labels) && // sent with register_tools
		sameWireNames(a.Config, b.Config)
}

// sameWireNames: a and b give every tool the same name on the server
// ([node] tool_names, [tools.NAME] name).
func sameWireNames(a, b config.Config) bool {
	if a.Node.ToolNames != b.Node.ToolNames {
		return false
	}
	for name := range a.Tools {
		if a.Tools[name].Name != b.Tools[name].Name {
			return false
		}
	}
	for name := range b.Tools {
		if a.Tools[name].Name != b.Tools[name].Name {
			return false
		}
	}
	return true
}
