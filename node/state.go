package node

import "github.com/vcpnode/vcpnode/controlapi"

// Phase is where the reconnect loop is, in the control API's words.
type Phase = controlapi.Phase

// Phases of the connection, as shown by `vcpnode status`.
const (
	PhaseConnecting = controlapi.PhaseConnecting
	PhaseConnected  = controlapi.PhaseConnected
	PhaseBackoff    = controlapi.PhaseBackoff
	PhaseStopping   = controlapi.PhaseStopping
	PhaseStopped    = controlapi.PhaseStopped
)

// ConnState is a snapshot of the hub connection (hubsession keeps it); the
// node adds ToolsHeld when it answers a status request.
type ConnState = controlapi.ConnectionStatus
