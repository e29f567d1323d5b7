package control

import (
	"fmt"
	"net"
	"net/http"
)

// refuseTools answers every request of a peer that is one of the daemon's
// own tool processes (Options.ToolProcess) with 403, whatever the endpoint:
// a plugin running as the daemon's user must not approve its own pending
// call, reconfigure the node, nor read what the owner reads (the status,
// other tools, the prompt, placeholders, held calls' arguments).
func (s *Server) refuseTools(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(peerKey{}).(peer)
		if err := p.toolErr; err != nil {
			s.opts.Log.Warn().Err(err).Str("path", r.URL.Path).Msg("control request refused")
			writeError(w, http.StatusForbidden, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// toolPeerError says whether the process that connected is a tool's, and
// refuses it if so; pid <= 0 is a peer that cannot be told (not Linux, or
// the console, whose sessions are minted over this socket).
func (s *Server) toolPeerError(c net.Conn, pid int) error {
	if s.opts.ToolProcess == nil || pid <= 0 {
		return nil
	}
	isTool, err := peerIsTool(c, pid, s.opts.ToolProcess)
	if err != nil {
		return fmt.Errorf("permission denied: cannot tell whether pid %d is a process a tool started: %w", pid, err)
	}
	if isTool {
		return fmt.Errorf("permission denied: pid %d is a process a tool started; tools may not use the control socket", pid)
	}
	return nil
}
