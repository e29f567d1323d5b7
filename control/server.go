package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// Options configure Listen.
type Options struct {
	// Socket is the path to listen on (see DefaultControlSocket).
	Socket string
	// ConfigFile is re-read by POST /v1/reload; empty refuses reloads.
	ConfigFile string
	// Version is shown by `vcpnode status`.
	Version string
	// MetricsAddr is where /metrics is served, for status; empty when off.
	MetricsAddr string
	// Group ([control] group), a name or number, may use the read-only
	// endpoints: the socket is made 0660 of that group.
	Group string
	// ToolProcess reports whether a pid belongs to a process a tool
	// started; such a peer is refused on every endpoint (peer_tool.go).
	ToolProcess func(pid int) bool
	Log         zerolog.Logger
}

// Server serves the control API on a Unix socket.
type Server struct {
	b    Backend
	opts Options
	uid  int // the daemon's own uid: its owner may write
	gid  int // [control] group's gid, or -1
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve has returned
	// closing ends event streams, which Shutdown would otherwise wait for.
	closing     chan struct{}
	closingOnce sync.Once

	metricsAddr atomic.Pointer[string] // see SetMetricsAddr
	console     atomic.Pointer[Console]
}

const (
	maxControlBody     = 8 * config.MiB
	controlReadTimeout = 10 * time.Second
)

// Listen listens on opts.Socket and serves the control API until
// Close. It answers before the node has connected: call it before Run.
func Listen(ctx context.Context, b Backend, opts Options) (*Server, error) {
	gid := -1
	if opts.Group != "" {
		g, err := lookupGroup(opts.Group)
		if err != nil {
			return nil, fmt.Errorf("control socket: [control] group: %w", err)
		}
		gid = g
	}
	ln, err := listenControlSocket(ctx, opts.Socket, gid)
	if err != nil {
		return nil, err
	}
	if gid >= 0 {
		if msg := groupCannotReach(opts.Socket, gid); msg != "" {
			opts.Log.Warn().Str("group", opts.Group).Msg(msg)
		}
	}
	s := &Server{b: b, opts: opts, uid: os.Getuid(), gid: gid, ln: ln, done: make(chan struct{}), closing: make(chan struct{})}
	s.SetMetricsAddr(opts.MetricsAddr)
	s.srv = &http.Server{
		Handler:           s.refuseTools(s.routes()),
		ReadHeaderTimeout: controlReadTimeout,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			uid, err := peerUID(c)
			pid := peerPID(c)
			return context.WithValue(ctx, peerKey{}, peer{uid: uid, err: err, pid: pid, toolErr: s.toolPeerError(c, pid)})
		},
		// net/http's own complaints (bad requests, accept errors) go to our log.
		ErrorLog: newStdLog(opts.Log, "control"),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Log.Error().Err(err).Str("socket", opts.Socket).Msg("control socket stopped serving")
		}
	}()
	opts.Log.Info().Str("socket", opts.Socket).Msg("control socket listening")
	return s, nil
}

// SetMetricsAddr is where /metrics is served, for status: the metrics
// endpoint starts after the control socket, and may listen on port 0.
func (s *Server) SetMetricsAddr(addr string) { s.metricsAddr.Store(&addr) }

// Socket is the path the server listens on.
func (s *Server) Socket() string { return s.opts.Socket }

// Close stops accepting, waits for requests in progress until ctx ends (then
// cuts them off), and removes the socket file.
func (s *Server) Close(ctx context.Context) error {
	s.closingOnce.Do(func() { close(s.closing) })
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}

type peerKey struct{}

type peer struct {
	uid int
	err error
	pid int // 0: unknown
	// toolErr refuses a tool's process on every endpoint (peer_tool.go),
	// told once at connect.
	toolErr error
}

// routes maps the API. Methods are checked by hand so that every error,
// 404 and 405 included, is JSON.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(controlapi.PathStatus, s.only(http.MethodGet, false, s.handleStatus))
	mux.HandleFunc(controlapi.PathTools, s.only(http.MethodGet, false, s.handleTools))
	mux.HandleFunc(controlapi.PathPrompt, s.only(http.MethodGet, false, s.handlePrompt))
	mux.HandleFunc(controlapi.PathPlaceholders, s.only(http.MethodGet, false, s.handlePlaceholders))
	mux.HandleFunc(controlapi.PathCall, s.only(http.MethodPost, true, s.handleCall))
	mux.HandleFunc(controlapi.PathMCPTools, s.only(http.MethodGet, true, s.handleMCPTools))
	mux.HandleFunc(controlapi.PathServerTools, s.only(http.MethodGet, false, s.handleServerTools))
	mux.HandleFunc(controlapi.PathReload, s.only(http.MethodPost, true, s.handleReload))
	mux.HandleFunc(controlapi.PathReconnect, s.only(http.MethodPost, true, s.handleReconnect))
	mux.HandleFunc(controlapi.PathRegister, s.only(http.MethodPost, true, s.handleRegister))
	// The arguments of held calls are the owner's business, and their
	// group's ([control] group) when they chose one.
	mux.HandleFunc(controlapi.PathApprovals, s.only(http.MethodGet, false, s.readers(s.handleApprovals)))
	mux.HandleFunc(controlapi.PathApprovals+"/{id}/{action}", s.only(http.MethodPost, true, s.handleDecision))
	mux.HandleFunc(controlapi.PathApprovalRules, s.only(http.MethodGet, false, s.readers(s.handleApprovalRules)))
	mux.HandleFunc(controlapi.PathForgetRule, s.only(http.MethodPost, true, s.handleForgetRule))
	// Events carry approval arguments and results: readable as approvals are.
	mux.HandleFunc(controlapi.PathEvents, s.only(http.MethodGet, false, s.readers(s.handleEvents)))
	mux.HandleFunc(controlapi.PathToolOverride, s.only(http.MethodPost, true, s.handleToolOverride))
	mux.HandleFunc(controlapi.PathParse, s.only(http.MethodPost, false, s.handleParse))
	mux.HandleFunc(controlapi.PathResults, s.only(http.MethodPost, false, s.handleResults))
	mux.HandleFunc(controlapi.PathConsoleLogin, s.only(http.MethodPost, true, s.handleConsoleLogin)) // console.go
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint %s; this daemon speaks the /v1/ API", r.URL.Path))
	})
	return mux
}

// only allows one method and, for endpoints that change something or show
// arguments (ownerOnly), only root or the daemon's own user.
func (s *Server) only(method string, ownerOnly bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s needs %s, not %s", r.URL.Path, method, r.Method))
			return
		}
		if ownerOnly {
			if err := s.checkPeer(r.Context()); err != nil {
				s.opts.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("control request refused")
				writeError(w, http.StatusForbidden, err)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
		h(w, r)
	}
}

// checkPeer lets root and the daemon's own user change things. Where the
// platform cannot tell (errPeerUnknown), the socket's mode is the guard.
func (s *Server) checkPeer(ctx context.Context) error {
	p, _ := ctx.Value(peerKey{}).(peer)
	switch {
	case errors.Is(p.err, errPeerUnknown):
		return nil
	case p.err != nil:
		return fmt.Errorf("permission denied: cannot tell who is asking (%v)", p.err)
	case !peerAllowed(p.uid, s.uid):
		return fmt.Errorf("permission denied: uid %d may not change this daemon; only root or uid %d (the daemon's user) may", p.uid, s.uid)
	}
	return nil
}

func peerAllowed(peerUID, daemonUID int) bool { return peerUID == 0 || peerUID == daemonUID }

// readers lets root, the daemon's user and members of [control] group
// through.
func (s *Server) readers(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := s.checkPeer(r.Context())
		if err != nil && s.gid >= 0 {
			if p, _ := r.Context().Value(peerKey{}).(peer); p.err == nil && inGroup(p.uid, s.gid) {
				err = nil
			}
		}
		if err != nil {
			s.opts.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("control request refused")
			writeError(w, http.StatusForbidden, err)
			return
		}
		h(w, r)
	}
}

// readBody reads an optional JSON body into v; unknown fields are errors,
// so that a typo in a script is caught. It answers 400 itself and returns
// false when the body does not decode.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("bad request body: %w", err))
		return false
	}
	return true
}

// writeJSON answers with v as JSON. Every answer passes through
// config.Redact: much of what the control API shows (request ids, tool
// names, errors, the serverId) came from the server and may echo the key.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		code, buf = http.StatusInternalServerError, bytes.Buffer{}
		fmt.Fprintf(&buf, "{\"error\":%q}\n", "cannot encode the answer: "+err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, config.Redact(buf.String())) // the client may be gone; nothing to do about it
}

// writeBackendError answers with the status the backend gave err, or code.
func writeBackendError(w http.ResponseWriter, code int, err error) {
	var api *controlapi.APIError
	if errors.As(err, &api) {
		code = api.Status
	}
	writeError(w, code, err)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, controlapi.ErrorResponse{Error: config.Redact(err.Error())})
}
