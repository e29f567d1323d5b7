//go:build !unix

package direct

import (
	"errors"
	"os"
)

// errNoHostChannel: the host's channel is a socket pair handed to Node.js
// as its fd 3, and Windows passes a child no descriptor past stderr (Go's
// os.StartProcess takes three files there). A loopback or named-pipe
// channel would lift this; until then direct plugins are refused here.
var errNoHostChannel = errors.New("direct (Node.js module) plugins do not run on this system yet: " +
	"their host talks to Node.js over a socket passed as descriptor 3, which needs Unix")

func socketPair() (ours, theirs *os.File, err error) { return nil, nil, errNoHostChannel }
