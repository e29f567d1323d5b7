package node

import (
	"time"

	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

// timings are the hub session's (hubsession.Timings) and the node's own;
// tests shorten them.
type timings struct {
	hubsession.Timings

	// killReserve is the part of shutdown_grace kept for the kill step:
	// plugin processes get SIGKILL this long after SIGTERM.
	killReserve time.Duration
	// observerRetry, when set, is the observer channels' schedule instead
	// of Retry: a seam for tests of a node connection that comes back first.
	observerRetry *hubconn.RetryPolicy
	// gpuProc replaces /proc/driver/nvidia/gpus (tests).
	gpuProc string
	// bridgeListWait bounds the wait for the server's tool list (zero:
	// the bridge's default).
	bridgeListWait time.Duration
}

func defaultTimings() timings {
	return timings{Timings: hubsession.DefaultTimings(), killReserve: plugin.DefaultKillGrace}
}
