package node

import "github.com/vcpnode/vcpnode/controlapi"

// The control API's names as the node's older tests spell them.
type (
	ControlClient  = controlapi.ControlClient
	EventsQuery    = controlapi.EventsQuery
	StatusResponse = controlapi.StatusResponse
	APIError       = controlapi.APIError
)

const (
	EventStreamStart = controlapi.EventStreamStart
	WaitsOnServer    = controlapi.WaitsOnServer
)
