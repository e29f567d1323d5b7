// Package fakehub is the tests' name for demohub, the in-process VCP main
// server: integration tests, benchmarks and test programs import it, the
// release binary never does (internal/archtest checks that).
package fakehub

import "github.com/vcpnode/vcpnode/demohub"

// The hub and what it hands a test, as demohub defines them.
type (
	Hub             = demohub.Hub
	Options         = demohub.Options
	Conn            = demohub.Conn
	Frame           = demohub.Frame
	Direction       = demohub.Direction
	ObserverConn    = demohub.ObserverConn
	ObserverFrame   = demohub.ObserverFrame
	ApprovalRequest = demohub.ApprovalRequest
	ApprovalAnswer  = demohub.ApprovalAnswer
	Bridge          = demohub.Bridge
	BridgePlugin    = demohub.BridgePlugin
)

// Directions, endpoints and channels, as demohub defines them.
const (
	FromNode       = demohub.FromNode
	ToNode         = demohub.ToNode
	EndpointPrefix = demohub.EndpointPrefix
	ChannelVCPLog  = demohub.ChannelVCPLog
	ChannelVCPInfo = demohub.ChannelVCPInfo

	AuthPath        = demohub.AuthPath
	AuthHeader      = demohub.AuthHeader
	AuthBoth        = demohub.AuthBoth
	AuthStripHeader = demohub.AuthStripHeader
)

// Errors, as demohub defines them.
var (
	ErrClosed          = demohub.ErrClosed
	ErrConnClosed      = demohub.ErrConnClosed
	ErrApprovalExpired = demohub.ErrApprovalExpired
)

// Start starts a hub on 127.0.0.1; see demohub.Start.
func Start(opts Options) (*Hub, error) { return demohub.Start(opts) }
