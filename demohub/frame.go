package demohub

import (
	"time"

	"github.com/vcpnode/vcpnode/wsproto"
)

// Direction tells which way a frame travelled.
type Direction int

const (
	// FromNode is a frame the node sent to the hub.
	FromNode Direction = iota + 1
	// ToNode is a frame the hub sent to the node.
	ToNode
)

func (d Direction) String() string {
	switch d {
	case FromNode:
		return "node->hub"
	case ToNode:
		return "hub->node"
	default:
		return "unknown"
	}
}

// Frame is one data frame on a connection.
type Frame struct {
	Dir    Direction
	ConnID string
	// Raw is the frame's payload exactly as it was on the wire.
	Raw []byte
	// Binary is true for a binary frame (the server decodes those too).
	Binary bool
	// Msg is the decoded message; nil when Err is set.
	Msg wsproto.Message
	// Err is why Raw did not decode. Such frames are recorded and otherwise
	// ignored, as the real server ignores them.
	Err error
	At  time.Time
}
