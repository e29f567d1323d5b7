package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/controlapi"
)

// errNotConnected: reconnect's wait ended without a registered connection.
var errNotConnected = errors.New("not connected")

// reconnectPoll is how often reconnect looks at the daemon's state.
const reconnectPoll = 100 * time.Millisecond

// reconnectReport is what `reconnect --json` prints.
type reconnectReport struct {
	Request    controlapi.ReconnectResponse `json:"request"`
	Connected  bool                         `json:"connected"`
	Connection controlapi.ConnectionStatus  `json:"connection"`
}

func newReconnectCmd(a *app) *cobra.Command {
	var f controlFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reconnect",
		Short: "Make a disconnected daemon try the server now, and wait until it is connected",
		Long: "reconnect cuts the running daemon's wait between connection attempts short, for\n" +
			"when you know the server is back, then waits up to --timeout for the daemon to be\n" +
			"connected with its tools registered, and says which. It exits 1 if the daemon is\n" +
			"still not connected then (with the last error). A connected daemon is left as it is.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ctx, done, err := a.controlClient(cmd.Context(), &f, controlTimeout+timeout)
			if err != nil {
				return err
			}
			defer done()
			return a.runReconnect(ctx, c, timeout, f.json)
		},
	}
	f.add(cmd, true)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the connection (`DURATION`, like 30s; 0 does not wait)")
	return cmd
}

func (a *app) runReconnect(ctx context.Context, c *controlapi.ControlClient, timeout time.Duration, asJSON bool) error {
	rep, err := c.Reconnect(ctx)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(reconnectPoll)
	defer tick.Stop()
	var st controlapi.StatusResponse
	for {
		if st, err = c.Status(ctx); err != nil {
			return err
		}
		if connectedAsAsked(st.Connection) || waitCtx.Err() != nil {
			break
		}
		select {
		case <-tick.C:
		case <-waitCtx.Done():
		}
	}
	conn := st.Connection
	if asJSON {
		if err := writeJSON(a.stdout, reconnectReport{Request: rep, Connected: connectedAsAsked(conn), Connection: conn}); err != nil {
			return err
		}
	}
	if !connectedAsAsked(conn) {
		return errors.New(notConnectedText(conn, timeout))
	}
	if asJSON {
		return nil
	}
	what := "connected"
	if !rep.Reconnecting && rep.Phase == controlapi.PhaseConnected {
		what = "already connected"
	}
	server := ""
	if conn.ServerID != "" {
		server = ", server id " + conn.ServerID
	}
	tools := "tools registered"
	if !conn.Registered {
		tools = "tools held until vcpnode register"
	}
	_, err = fmt.Fprintf(a.stdout, "%s to %s%s; %s (connected for %s)\n", what, st.HubURL, server, tools, ctlAge(st.Now.Sub(conn.Since)))
	return err
}

// connectedAsAsked: connected with the tools registered, or with them
// held back by [node] register = false, which only vcpnode register ends.
func connectedAsAsked(c controlapi.ConnectionStatus) bool {
	return c.Registered || (c.ToolsHeld && c.Phase == controlapi.PhaseConnected)
}

// notConnectedText is reconnect's answer when the wait ended without a
// registered connection: the phase in words, the attempts, the last error,
// and what dropped handshakes likely mean.
func notConnectedText(conn controlapi.ConnectionStatus, waited time.Duration) string {
	msg := fmt.Sprintf("%s after %s: the daemon is %s (%s so far)", errNotConnected, ctlAge(waited), phaseWords(conn), count(conn.Attempt, "failed attempt"))
	if conn.LastError != "" {
		msg += "; last error: " + ctlClip(conn.LastError, 160)
	}
	if conn.HandshakesDropped > 0 {
		msg += "; " + droppedHandshakesText(conn.HandshakesDropped)
	}
	return msg
}
