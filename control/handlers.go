package control

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// The /v1/ handlers: each checks its request, asks the backend and writes
// the answer; routes (server.go) checks methods and callers first.

func (s *Server) handleStatus(w http.ResponseWriter, _ *http.Request) {
	st := s.b.Status()
	st.Version, st.ConfigFile, st.Socket = s.opts.Version, s.opts.ConfigFile, s.opts.Socket
	st.Metrics, st.PID = *s.metricsAddr.Load(), os.Getpid()
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleTools(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.ToolStatuses())
}

func (s *Server) handlePrompt(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if _, ok := textproto.PromptFormat(format); format != "" && !ok {
		writeError(w, http.StatusBadRequest, fmt.Errorf("format %q is not one of %s", format, strings.Join(textproto.PromptFormats, ", ")))
		return
	}
	out, err := s.b.Prompt(format)
	if err != nil {
		writeBackendError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handlePlaceholders(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.Placeholders())
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var req controlapi.CallRequest
	if !readBody(w, r, &req) {
		return
	}
	if req.Tool == "" {
		writeError(w, http.StatusBadRequest, errors.New("no tool named: send {\"tool\": NAME, \"args\": {…}}"))
		return
	}
	if req.Via != "" && req.Via != controlapi.ViaMCP {
		writeError(w, http.StatusBadRequest, fmt.Errorf("via %q: the only caller named is \"mcp\"", req.Via))
		return
	}
	if req.Progress {
		s.callStreaming(w, r, req) // progress.go
		return
	}
	// The request's context ends when the client goes away (Ctrl-C), which
	// cancels the call.
	out, err := s.b.Call(r.Context(), req)
	if err != nil {
		writeBackendError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleMCPTools(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, controlapi.MCPToolsResponse{Tools: s.b.MCPTools()})
}

func (s *Server) handleServerTools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.ServerTools(r.Context(), r.URL.Query().Get("refresh") != ""))
}

func (s *Server) handleReload(w http.ResponseWriter, _ *http.Request) {
	if s.opts.ConfigFile == "" {
		writeError(w, http.StatusConflict, errors.New("this daemon was not started from a config file; there is nothing to reload"))
		return
	}
	rep, err := s.b.ReloadFile(s.opts.ConfigFile)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err)
		return
	}
	writeJSON(w, http.StatusOK, controlapi.ReloadResponse{ConfigFile: s.opts.ConfigFile, ReloadReport: rep})
}

func (s *Server) handleRegister(w http.ResponseWriter, _ *http.Request) {
	resp, err := s.b.Register()
	if err != nil {
		writeBackendError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleReconnect(w http.ResponseWriter, _ *http.Request) {
	phase := s.b.Phase()
	resp := controlapi.ReconnectResponse{Phase: phase}
	switch phase {
	case controlapi.PhaseBackoff:
		s.b.Reconnect()
		resp.Reconnecting = true
		resp.Message = "reconnecting now instead of waiting"
	case controlapi.PhaseConnected:
		resp.Message = "already connected; nothing to do"
	case controlapi.PhaseConnecting:
		resp.Message = "already connecting; nothing to do"
	default:
		writeError(w, http.StatusServiceUnavailable, errors.New("the node is shutting down"))
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleApprovals(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, controlapi.ApprovalsResponse{Now: time.Now(), Pending: s.b.PendingApprovals()})
}

func (s *Server) handleDecision(w http.ResponseWriter, r *http.Request) {
	id, action := r.PathValue("id"), r.PathValue("action")
	if action != controlapi.DecisionApprove && action != controlapi.DecisionDeny {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint %s: use …/approve or …/deny", r.URL.Path))
		return
	}
	var req controlapi.DecisionRequest
	if !readBody(w, r, &req) {
		return
	}
	res, err := s.b.Decide(id, action == controlapi.DecisionApprove, req)
	if err != nil {
		writeBackendError(w, http.StatusNotFound, err)
		return
	}
	a := res.Approval
	msg := "owner decided a pending call"
	if a.Where == controlapi.WaitsOnServer {
		msg = "owner answered a server approval"
	}
	ev := s.opts.Log.Info().Str("tool", a.Tool).Str("request_id", a.RequestID).Str("decision", action)
	if res.Rule != nil {
		ev = ev.Str("rule", res.Rule.ID)
	}
	ev.Msg(msg)
	res.Decision = action
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleApprovalRules(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.ApprovalRules())
}

func (s *Server) handleForgetRule(w http.ResponseWriter, r *http.Request) {
	var req controlapi.ForgetRuleRequest
	if !readBody(w, r, &req) {
		return
	}
	if req.ID == "" {
		writeError(w, http.StatusBadRequest, errors.New("no rule named: send {\"id\": RULE} (vcpnode approvals rules lists them)"))
		return
	}
	res, err := s.b.ForgetRule(req.ID)
	if err != nil {
		writeBackendError(w, http.StatusNotFound, err)
		return
	}
	s.opts.Log.Info().Str("rule", res.Rule.ID).Msg("owner forgot an approval rule")
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleToolOverride(w http.ResponseWriter, r *http.Request) {
	var req controlapi.ToolOverrideRequest
	if !readBody(w, r, &req) {
		return
	}
	if req.Timeout != "" {
		if _, err := config.ParseToolTimeout(req.Timeout); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
	}
	res, err := s.b.ToolOverride(r.PathValue("name"), req)
	if err != nil {
		writeBackendError(w, http.StatusUnprocessableEntity, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// ErrConsoleOff is the answer to a login request while no console is served.
var ErrConsoleOff = errors.New("the web console is off: set [console] listen = \"127.0.0.1:7465\" in the config and restart the daemon")

func (s *Server) handleConsoleLogin(w http.ResponseWriter, _ *http.Request) {
	c := s.console.Load()
	if c == nil {
		writeError(w, http.StatusConflict, ErrConsoleOff)
		return
	}
	writeJSON(w, http.StatusOK, c.NewLogin())
}

// setConsole is the web console serving this API, or nil.
func (s *Server) setConsole(c *Console) { s.console.Store(c) }
