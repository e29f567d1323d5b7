package control

import "fmt"

// toolPeerError refuses a peer that is one of the daemon's own tool
// processes (Options.ToolProcess): a plugin running as the daemon's user
// must not approve its own pending call, or reconfigure the node.
func (s *Server) toolPeerError(p peer) error {
	if s.opts.ToolProcess == nil || p.pid <= 0 || !s.opts.ToolProcess(p.pid) {
		return nil
	}
	return fmt.Errorf("permission denied: pid %d is a process a tool started; tools may not change this daemon", p.pid)
}
