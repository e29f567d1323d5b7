package node

import (
	"errors"
	"net/http"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

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

// Register lets the tools be registered: at once on the connection in
// place, and on every connection after it. It is safe to call more than
// once. In observer mode there is no connection to register on: an error.
func (n *Node) Register() (controlapi.RegisterResponse, error) {
	if n.mode == config.ModeObserver {
		return controlapi.RegisterResponse{}, answerWith(http.StatusConflict,
			errors.New("node.mode = \""+config.ModeObserver+"\": there is no distributed session to register tools on"))
	}
	if n.hold.isAllowed() {
		return controlapi.RegisterResponse{Message: "the tools are registered on every connection already; nothing to do"}, nil
	}
	n.holdMu.Lock()
	if !n.hold.isAllowed() {
		close(n.hold.allowed)
	}
	n.holdMu.Unlock()
	select {
	case n.hold.now <- struct{}{}:
	default:
	}
	n.log.Info().Msg("tools allowed to register (vcpnode register)")
	return controlapi.RegisterResponse{Registering: true, Message: "registering the tools with the server"}, nil
}
