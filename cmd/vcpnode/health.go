package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// newHealthCmd is the one-line verdict for scripts and container health
// checks; `status` stays the full report, exit 0 whenever it could ask.
func newHealthCmd(a *app) *cobra.Command {
	var f controlFlags
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exit 0 if the daemon is connected with its tools registered, 1 if not (for scripts and health checks)",
		Long: "health asks the running daemon whether it is doing its job and says so in one line:\n" +
			"exit 0 when it is connected to the main server with its tools registered (in\n" +
			"observer mode: every observer channel connected), exit 1 with the reason when it\n" +
			"is not, or when no daemon answers. `vcpnode status` is the full report.",
		Example: "  vcpnode health\n  until vcpnode health >/dev/null; do sleep 1; done",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return askDaemon(a, cmd, &f, (*controlapi.ControlClient).Status, printHealth)
		},
	}
	f.add(cmd, false)
	return cmd
}

// unhealthy says why a daemon with status st is not doing its job, or "".
// Tools held back on purpose ([node] register = false) are no fault.
func unhealthy(st controlapi.StatusResponse) string {
	if st.Mode != config.ModeObserver {
		c := st.Connection
		switch {
		case c.Phase != controlapi.PhaseConnected:
			why := fmt.Sprintf("not connected to the server (%s)", c.Phase)
			if c.LastError != "" {
				why += ": " + config.Redact(c.LastError)
			}
			return why
		case !c.Registered && !c.ToolsHeld:
			return "connected, but the tools are not registered yet"
		}
	}
	for _, o := range st.Observers {
		if o.Phase != controlapi.PhaseConnected {
			return fmt.Sprintf("observer channel %s not connected (%s)", o.Channel, o.Phase)
		}
	}
	return ""
}

// printHealth prints the healthy line, or returns why st is not healthy.
func printHealth(w io.Writer, st controlapi.StatusResponse) error {
	if why := unhealthy(st); why != "" {
		return errors.New("unhealthy: " + why)
	}
	line := "connected to " + st.HubURL + ", tools registered"
	switch {
	case st.Mode == config.ModeObserver:
		line = fmt.Sprintf("observer mode, %s connected", count(len(st.Observers), "channel"))
	case st.Connection.ToolsHeld:
		line = "connected to " + st.HubURL + ", tools held back (register = false)"
	}
	_, err := fmt.Fprintln(w, "healthy: "+line)
	return err
}
