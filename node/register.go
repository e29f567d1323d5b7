package node

import (
	"errors"
	"net/http"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// Register lets the tools be registered: at once on the connection in
// place, and on every connection after it ([node] register = false holds
// them back until then). It is safe to call more than once. In observer
// mode there is no connection to register on: an error.
func (n *Node) Register() (controlapi.RegisterResponse, error) {
	if n.mode == config.ModeObserver {
		return controlapi.RegisterResponse{}, answerWith(http.StatusConflict,
			errors.New("node.mode = \""+config.ModeObserver+"\": there is no distributed session to register tools on"))
	}
	if !n.hub.Register() {
		return controlapi.RegisterResponse{Message: "the tools are registered on every connection already; nothing to do"}, nil
	}
	n.log.Info().Msg("tools allowed to register (vcpnode register)")
	return controlapi.RegisterResponse{Registering: true, Message: "registering the tools with the server"}, nil
}
