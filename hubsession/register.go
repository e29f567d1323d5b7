package hubsession

// Holding the tools back: with [node] register = false the node connects
// and reports its addresses, but sends register_tools only once the owner
// runs `vcpnode register`. From then on every connection registers.

// registerHold is whether register_tools may go out, and the signal that
// tells the session in place to send it now.
type registerHold struct {
	allowed chan struct{} // closed once tools may be registered
	now     chan struct{} // buffered: one pending "register now"
}

func newRegisterHold(register bool) *registerHold {
	h := &registerHold{allowed: make(chan struct{}), now: make(chan struct{}, 1)}
	if register {
		close(h.allowed)
	}
	return h
}

func (h *registerHold) isAllowed() bool {
	select {
	case <-h.allowed:
		return true
	default:
		return false
	}
}

// ToolsHeld says whether register_tools is still held back until Register.
func (e *Engine) ToolsHeld() bool { return !e.hold.isAllowed() }

// Register lets the tools be registered: at once on the connection in
// place, and on every connection after it. It is safe to call more than
// once; false when they were allowed already.
func (e *Engine) Register() bool {
	if e.hold.isAllowed() {
		return false
	}
	e.holdMu.Lock()
	if !e.hold.isAllowed() {
		close(e.hold.allowed)
	}
	e.holdMu.Unlock()
	select {
	case e.hold.now <- struct{}{}:
	default:
	}
	return true
}
