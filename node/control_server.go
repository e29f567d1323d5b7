package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
)

// ControlOptions configure ListenControl.
type ControlOptions struct {
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
	Log   zerolog.Logger
}

// ControlServer serves the control API on a Unix socket.
type ControlServer struct {
	n    *Node
	opts ControlOptions
	uid  int // the daemon's own uid: its owner may write
	gid  int // [control] group's gid, or -1
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve has returned
	// closing ends event streams, which Shutdown would otherwise wait for.
	closing     chan struct{}
	closingOnce sync.Once

	metricsAddr atomic.Pointer[string] // see SetMetricsAddr
	console     atomic.Pointer[ConsoleServer]
}

const (
	maxControlBody     = 8 * config.MiB
	controlReadTimeout = 10 * time.Second
)

// ListenControl listens on opts.Socket and serves the control API until
// Close. It answers before the node has connected: call it before Run.
func ListenControl(ctx context.Context, n *Node, opts ControlOptions) (*ControlServer, error) {
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
	s := &ControlServer{n: n, opts: opts, uid: os.Getuid(), gid: gid, ln: ln, done: make(chan struct{}), closing: make(chan struct{})}
	s.SetMetricsAddr(opts.MetricsAddr)
	s.srv = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: controlReadTimeout,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			uid, err := peerUID(c)
			return context.WithValue(ctx, peerKey{}, peer{uid: uid, err: err})
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
func (s *ControlServer) SetMetricsAddr(addr string) { s.metricsAddr.Store(&addr) }

// Socket is the path the server listens on.
func (s *ControlServer) Socket() string { return s.opts.Socket }

// Close stops accepting, waits for requests in progress until ctx ends (then
// cuts them off), and removes the socket file.
func (s *ControlServer) Close(ctx context.Context) error {
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
}

// routes maps the API. Methods are checked by hand so that every error,
// 404 and 405 included, is JSON.
func (s *ControlServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(controlapi.PathStatus, s.only(http.MethodGet, false, s.handleStatus))
	mux.HandleFunc(controlapi.PathTools, s.only(http.MethodGet, false, s.handleTools))
	mux.HandleFunc(controlapi.PathPrompt, s.only(http.MethodGet, false, s.handlePrompt))             // prompt.go
	mux.HandleFunc(controlapi.PathPlaceholders, s.only(http.MethodGet, false, s.handlePlaceholders)) // placeholders_control.go
	mux.HandleFunc(controlapi.PathCall, s.only(http.MethodPost, true, s.handleCall))
	mux.HandleFunc(controlapi.PathMCPTools, s.only(http.MethodGet, true, s.handleMCPTools)) // control_mcp.go
	mux.HandleFunc(controlapi.PathReload, s.only(http.MethodPost, true, s.handleReload))
	mux.HandleFunc(controlapi.PathReconnect, s.only(http.MethodPost, true, s.handleReconnect))
	// The arguments of held calls are the owner's business, and their
	// group's ([control] group) when they chose one.
	mux.HandleFunc(controlapi.PathApprovals, s.only(http.MethodGet, false, s.readers(s.handleApprovals)))
	mux.HandleFunc(controlapi.PathApprovals+"/{id}/{action}", s.only(http.MethodPost, true, s.handleDecision))
	// Events carry approval arguments and results: readable as approvals are.
	mux.HandleFunc(controlapi.PathEvents, s.only(http.MethodGet, false, s.readers(s.handleEvents)))  // control_events.go
	mux.HandleFunc(controlapi.PathToolOverride, s.only(http.MethodPost, true, s.handleToolOverride)) // overrides.go
	mux.HandleFunc(controlapi.PathParse, s.only(http.MethodPost, false, s.handleParse))              // parse_control.go
	mux.HandleFunc(controlapi.PathConsoleLogin, s.only(http.MethodPost, true, s.handleConsoleLogin)) // console_server.go
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint %s; this daemon speaks the /v1/ API", r.URL.Path))
	})
	return mux
}

// only allows one method and, for endpoints that change something or show
// arguments (ownerOnly), only root or the daemon's own user.
func (s *ControlServer) only(method string, ownerOnly bool, h http.HandlerFunc) http.HandlerFunc {
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
func (s *ControlServer) checkPeer(ctx context.Context) error {
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
func (s *ControlServer) readers(h http.HandlerFunc) http.HandlerFunc {
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

func (s *ControlServer) handleStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.status())
}

func (s *ControlServer) status() controlapi.StatusResponse {
	n := s.n
	st, _ := n.State()
	conn := controlapi.ConnectionStatus{
		Phase: st.Phase, Since: st.Since, ServerID: st.ServerID, Attempt: st.Attempt,
		LastError: st.LastError, Registered: st.Registered, Sessions: st.Sessions, Reconnects: max(st.Sessions-1, 0),
	}
	if !st.LastErrorAt.IsZero() {
		at := st.LastErrorAt
		conn.LastErrorAt = &at
	}
	if !st.DisconnectedAt.IsZero() {
		at := st.DisconnectedAt
		conn.DisconnectedAt = &at
	}
	if st.Phase == PhaseBackoff && !st.RetryAt.IsZero() {
		at := st.RetryAt
		conn.RetryAt = &at
	}
	var counts controlapi.ToolCounts
	for _, t := range n.Tools() {
		if t.Spec.Implicit {
			continue // never registered (internal_request_file): the server does not count it
		}
		counts.Registered++
		if t.Exposure.Exposed {
			counts.Exposed++
		} else {
			counts.Hidden++
		}
	}
	for _, sp := range n.SkippedPlugins() {
		switch sp.Kind {
		case "unsupported":
			counts.Unsupported++
		case "invalid":
			counts.Invalid++
		}
	}
	inflight := []controlapi.InFlightStatus{}
	for _, c := range n.InFlight() {
		state := controlapi.CallRunning
		switch {
		case c.AwaitingApproval:
			state = controlapi.CallAwaitingApproval
		case c.Queued:
			state = controlapi.CallQueued
		}
		inflight = append(inflight, controlapi.InFlightStatus{
			RequestID: c.RequestID, Tool: c.Tool, Started: c.Started, Deadline: c.Deadline, State: state, Local: c.Local,
		})
	}
	ph := n.Placeholders().Placeholders
	phErrors := 0
	for _, p := range ph {
		if p.LastError != "" {
			phErrors++
		}
	}
	return controlapi.StatusResponse{
		Version: s.opts.Version, PID: os.Getpid(), StartedAt: n.tel.started, Now: time.Now(),
		Name: n.Name(), HubURL: n.HubURL(), ConfigFile: s.opts.ConfigFile, Socket: s.opts.Socket,
		Metrics: *s.metricsAddr.Load(), Connection: conn, Tools: counts, InFlight: inflight,
		PendingApprovals: n.Approvals().Len() + len(n.obs.approvals.list()), Placeholders: len(ph), PlaceholderErrors: phErrors,
		Observers:  apiObservers(n.ObserverStatuses()),
		MCPServers: mcpServerStatus(n.MCPServers()),
	}
}

// apiObservers is the observer connections as the control API shows them.
func apiObservers(in []ObserverStatus) []controlapi.ObserverStatus {
	out := make([]controlapi.ObserverStatus, 0, len(in))
	for _, o := range in {
		out = append(out, controlapi.ObserverStatus(o))
	}
	return out
}

func (s *ControlServer) handleTools(w http.ResponseWriter, _ *http.Request) {
	pol := s.n.Config().Policy()
	out := controlapi.ToolsResponse{Tools: []controlapi.ToolStatus{}}
	ov := s.n.overrides.Load()
	if ov != nil {
		out.OverridesFile = ov.path
	}
	servers := map[string]mcp.Status{} // by source, "mcp:NAME"
	for _, st := range s.n.MCPServers() {
		servers["mcp:"+st.Name] = st
	}
	for _, t := range s.n.Tools() {
		mode, wait := pol.Approval(t.Spec.Name)
		ts := controlapi.ToolStatus{
			Name: t.Spec.Name, DisplayName: t.Spec.DisplayName, Version: t.Spec.Version, Source: t.Spec.Source,
			Builtin: t.Spec.Builtin, Implicit: t.Spec.Implicit, Exposed: t.Exposure.Exposed, Reason: t.Exposure.Reason,
			TimeoutMs: t.Timeout.Milliseconds(), MaxConcurrent: t.MaxConcurrent, Approval: string(mode),
			Commands: commandStatuses(t.Spec.Commands),
		}
		if ov != nil {
			if o, ok := ov.o.Tools[t.Spec.Name]; ok {
				ts.Override = &o
			}
		}
		if mode == toolhost.ApprovalAsk {
			ts.ApprovalTimeoutMs = wait.Milliseconds()
		}
		if st, ok := servers[t.Spec.Source]; ok {
			delete(servers, t.Spec.Source)
			ts.State = string(st.State)
			if st.State != mcp.StateRunning && st.LastError != "" {
				ts.Reason += "; MCP server down: " + config.Redact(st.LastError)
			}
		}
		out.Tools = append(out.Tools, ts)
	}
	for _, st := range s.n.MCPServers() {
		if _, left := servers["mcp:"+st.Name]; !left {
			continue
		}
		why := "its tools were never listed"
		if st.LastError != "" {
			why += ": " + config.Redact(st.LastError)
		}
		out.Tools = append(out.Tools, controlapi.ToolStatus{
			Name: st.Tool, Source: "mcp:" + st.Name, Reason: string(st.State) + ": " + why,
			Skipped: string(st.State), State: string(st.State),
		})
	}
	for _, sp := range s.n.SkippedPlugins() {
		name := sp.Name
		if name == "" {
			// A manifest too broken to name itself goes by its folder.
			name = "(" + filepath.Base(filepath.Dir(sp.Path)) + ")"
		}
		out.Tools = append(out.Tools, controlapi.ToolStatus{
			Name: name, Source: sp.Path, Reason: skippedReason(sp.Kind, sp.Reason), Skipped: sp.Kind,
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// commandStatuses shows a tool's commands and, for typed ones, their
// parameters: the console builds its forms from them.
func commandStatuses(cmds []toolhost.Command) []controlapi.CommandStatus {
	var out []controlapi.CommandStatus
	for _, c := range cmds {
		cs := controlapi.CommandStatus{Command: c.Command, Description: c.Description, Example: c.Example}
		if c.Schema != nil {
			cs.Typed = true
			cs.Params = []controlapi.ParamStatus{}
			for _, p := range c.Schema.Params {
				cs.Params = append(cs.Params, controlapi.ParamStatus{
					Name: p.Name, Description: p.Description, Type: string(p.Type), Required: p.Required,
					Enum: p.Enum, Default: p.Default, Alias: p.Alias,
				})
			}
		}
		out = append(out, cs)
	}
	return out
}

func (s *ControlServer) handleCall(w http.ResponseWriter, r *http.Request) {
	var req controlapi.CallRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, errors.New("no tool named: send {\"tool\": NAME, \"args\": {…}}"))
		return
	}
	if req.Args == nil {
		req.Args = map[string]json.RawMessage{} // the server always sends an object
	}
	id := "local-" + rand.Text()[:8]
	started := time.Now()
	// The request's context ends when the client goes away (Ctrl-C), which
	// cancels the call.
	var o toolhost.Outcome
	switch req.Via {
	case "":
		o = s.n.CallLocal(r.Context(), id, req.Tool, req.Args)
	case controlapi.ViaMCP:
		id = "mcp-" + rand.Text()[:8]
		o = s.n.callMCP(r.Context(), id, req.Tool, req.Args) // control_mcp.go
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("via %q: the only caller named is \"mcp\"", req.Via))
		return
	}
	switch {
	case errors.Is(o.Cause, toolhost.ErrUnknownTool):
		writeError(w, http.StatusNotFound, o.Cause)
		return
	case errors.Is(o.Cause, toolhost.ErrShuttingDown):
		writeError(w, http.StatusServiceUnavailable, o.Cause)
		return
	}
	writeJSON(w, http.StatusOK, controlapi.CallResponse{
		RequestID: id, Tool: req.Tool, OK: o.OK(), Result: o.Result, Error: o.Err,
		Outcome: toolhost.OutcomeKind(o), DurationMs: time.Since(started).Milliseconds(),
	})
}

func (s *ControlServer) handleReload(w http.ResponseWriter, _ *http.Request) {
	if s.opts.ConfigFile == "" {
		writeError(w, http.StatusConflict, errors.New("this daemon was not started from a config file; there is nothing to reload"))
		return
	}
	rep, err := s.n.ReloadFile(s.opts.ConfigFile)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)
		return
	}
	writeJSON(w, http.StatusOK, controlapi.ReloadResponse{ConfigFile: s.opts.ConfigFile, ReloadReport: rep})
}

func (s *ControlServer) handleReconnect(w http.ResponseWriter, _ *http.Request) {
	st, _ := s.n.State()
	resp := controlapi.ReconnectResponse{Phase: st.Phase}
	switch st.Phase {
	case PhaseBackoff:
		s.n.Reconnect()
		resp.Reconnecting = true
		resp.Message = "reconnecting now instead of waiting"
	case PhaseConnected:
		resp.Message = "already connected; nothing to do"
	case PhaseConnecting:
		resp.Message = "already connecting; nothing to do"
	default:
		writeError(w, http.StatusServiceUnavailable, errors.New("the node is shutting down"))
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// setConsole is the web console serving this API, or nil.
func (s *ControlServer) setConsole(c *ConsoleServer) { s.console.Store(c) }

// ErrConsoleOff is the answer to a login request while no console is served.
var ErrConsoleOff = errors.New("the web console is off: set [console] listen = \"127.0.0.1:7465\" in the config and restart the daemon")

func (s *ControlServer) handleConsoleLogin(w http.ResponseWriter, _ *http.Request) {
	c := s.console.Load()
	if c == nil {
		writeError(w, http.StatusConflict, ErrConsoleOff)
		return
	}
	writeJSON(w, http.StatusOK, c.NewLogin())
}

func (s *ControlServer) handleApprovals(w http.ResponseWriter, _ *http.Request) {
	out := controlapi.ApprovalsResponse{Now: time.Now(), Pending: []controlapi.ApprovalStatus{}}
	for _, p := range s.n.Approvals().Pending() {
		out.Pending = append(out.Pending, approvalStatus(p))
	}
	for _, a := range s.n.obs.approvals.list() {
		out.Pending = append(out.Pending, serverApprovalStatus(a))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *ControlServer) handleDecision(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	if action != controlapi.DecisionApprove && action != controlapi.DecisionDeny {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint %s: use …/approve or …/deny", r.URL.Path))
		return
	}
	var req controlapi.DecisionRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	// Server approvals go by the server's requestId, "approve-…".
	if _, ok := s.n.obs.approvals.get(id); ok || strings.HasPrefix(id, "approve-") {
		a, err := s.n.obs.answer(id, action == controlapi.DecisionApprove, req.Reason)
		if err != nil {
			code := http.StatusServiceUnavailable
			if errors.Is(err, ErrNoSuchServerApproval) {
				code = http.StatusNotFound
			}
			writeError(w, code, err)
			return
		}
		s.opts.Log.Info().Str("tool", a.Tool).Str("request_id", a.RequestID).Str("decision", action).Msg("owner answered a server approval")
		writeJSON(w, http.StatusOK, controlapi.DecisionResponse{Decision: action, Approval: serverApprovalStatus(a)})
		return
	}
	p, err := s.n.Approvals().Decide(id, action == controlapi.DecisionApprove, req.Reason)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	s.opts.Log.Info().Str("tool", p.Tool).Str("request_id", p.RequestID).Str("decision", action).Msg("owner decided a pending call")
	writeJSON(w, http.StatusOK, controlapi.DecisionResponse{Decision: action, Approval: approvalStatus(p)})
}

func approvalStatus(p toolhost.PendingApproval) controlapi.ApprovalStatus {
	return controlapi.ApprovalStatus{ID: p.ID, RequestID: p.RequestID, Tool: p.Tool, Args: p.Args, Requested: p.Requested, Expires: p.Expires, Where: controlapi.WaitsOnNode}
}

func serverApprovalStatus(a serverApproval) controlapi.ApprovalStatus {
	return controlapi.ApprovalStatus{
		ID: a.RequestID, RequestID: a.RequestID, Tool: a.Tool, Args: a.Args, Requested: a.Requested, Expires: a.Expires,
		Where: controlapi.WaitsOnServer, Maid: a.Maid, TTLMs: a.TTL.Milliseconds(),
	}
}

// decodeBody reads an optional JSON body into v; unknown fields are errors,
// so that a typo in a script is caught.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("bad request body: %w", err)
	}
	return nil
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

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, controlapi.ErrorResponse{Error: config.Redact(err.Error())})
}

// skippedReason is "kind: reason", with a reason for every kind even when
// the scan gave none (a disabled plugin is disabled by its file name).
func skippedReason(kind, reason string) string {
	if reason == "" {
		switch kind {
		case "disabled":
			reason = "its manifest is renamed plugin-manifest.json.block; rename it back to enable the plugin"
		default:
			reason = "no reason recorded"
		}
	}
	return kind + ": " + reason
}
