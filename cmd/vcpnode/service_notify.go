package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/sdnotify"
)

// connStates is what the service-manager notifications follow; *node.Node
// has it.
type connStates interface {
	State() (node.ConnState, <-chan struct{})
	HubURL() string
}

// notifyServiceManager tells systemd, when it started the daemon with
// Type=notify, what the daemon is doing. Call it once the control socket
// listens: it says READY=1 as soon as the node's first connection attempt
// has begun, keeps STATUS= in step with the connection, says STOPPING=1 when
// shutdown begins, and pings the watchdog. Reloads are announced by the
// node itself (node.WithNotifier). The returned function stops it and waits.
func notifyServiceManager(ctx context.Context, nt *sdnotify.Notifier, n nodeRunner) (stop func()) {
	if !nt.Enabled() {
		return func() {}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { nt.RunWatchdog(ctx) })
	wg.Go(func() { followConnection(ctx, nt, n) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// followConnection sends READY=1, then STATUS= on every change of the
// connection, and STOPPING=1 once, until ctx ends.
func followConnection(ctx context.Context, nt *sdnotify.Notifier, n nodeRunner) {
	src, ok := n.(connStates)
	if !ok { // a node without state (tests' fakes) is ready once it runs
		_ = nt.Ready("serving")
		return
	}
	_, changed := src.State()
	// The reconnect loop's first update: the first attempt has begun.
	select {
	case <-changed:
	case <-ctx.Done():
		return
	}
	ready, last := false, ""
	for {
		var st node.ConnState
		st, changed = src.State()
		line := connectionStatus(st, hubBase(src.HubURL()))
		switch {
		case st.Phase == controlapi.PhaseStopping || st.Phase == controlapi.PhaseStopped:
			_ = nt.Stopping(line)
			return
		case !ready:
			_ = nt.Ready(line)
			ready = true
		case line != last:
			_ = nt.Status(line)
		}
		last = line
		select {
		case <-changed:
		case <-ctx.Done():
			// A quick shutdown can end Run, and so ctx, while the change
			// to stopping is still unread: say STOPPING=1 all the same.
			if st, _ := src.State(); st.Phase == controlapi.PhaseStopping || st.Phase == controlapi.PhaseStopped {
				_ = nt.Stopping(connectionStatus(st, hubBase(src.HubURL())))
			}
			return
		}
	}
}

// hubBase is the server's base URL from the node's redacted hub URL: the
// path with the (redacted) key says nothing to a reader.
func hubBase(hubURL string) string {
	base, _, _ := strings.Cut(hubURL, "/vcp-distributed-server/")
	return base
}

// connectionStatus is the line `systemctl status` shows.
func connectionStatus(st node.ConnState, hub string) string {
	switch st.Phase {
	case controlapi.PhaseConnected:
		if st.ServerID != "" {
			return fmt.Sprintf("connected to %s (server %s)", hub, st.ServerID)
		}
		return "connected to " + hub
	case controlapi.PhaseBackoff:
		return fmt.Sprintf("disconnected from %s, retrying (attempt %d): %s", hub, st.Attempt, st.LastError)
	case controlapi.PhaseStopping, controlapi.PhaseStopped:
		return "shutting down"
	}
	return "connecting to " + hub
}
