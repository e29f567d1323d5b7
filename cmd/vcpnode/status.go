package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

func newStatusCmd(a *app) *cobra.Command {
	return queryCmd(a, &cobra.Command{
		Use:   "status",
		Short: "Show the running daemon's connection, tools, calls in flight and pending approvals",
		Long: "status asks the running daemon (over its control socket) how it is doing: the\n" +
			"connection to the main server and since when, the next retry and last error while\n" +
			"disconnected, how many tools are exposed, each MCP server's state, the calls in flight, the calls awaiting\n" +
			"approval, and its version and uptime.",
	}, (*controlapi.ControlClient).Status, printStatus)
}

// printStatus writes the human form of a status: label, value lines
// aligned, then the calls in flight as a table.
func printStatus(w io.Writer, st controlapi.StatusResponse) error {
	ago := func(t time.Time) string { return ctlAge(st.Now.Sub(t)) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", label, fmt.Sprintf(format, args...))
	}
	version := st.Version
	if version == "" {
		version = "(unknown version)"
	}
	line("vcpnode", "%s, pid %d, up %s", version, st.PID, ago(st.StartedAt))

	c := st.Connection
	// Disconnected time counts from the drop, not from the current phase,
	// which restarts with every attempt; attempts are counted as in JSON.
	down := ago(c.Since)
	if c.DisconnectedAt != nil {
		down = ago(*c.DisconnectedAt)
	}
	if st.Mode != "" && st.Mode != config.ModeDistributed {
		line("mode", "%s", modeWords(st.Mode))
	}
	switch {
	case st.Mode == config.ModeObserver:
		line("connection", "none: observer mode keeps no distributed session")
	case c.Phase == controlapi.PhaseConnected:
		registered := ", tools registered"
		switch {
		case c.ToolsHeld:
			registered = ", tools not registered yet (register = false; vcpnode register)"
		case !c.Registered:
			registered = ", registering tools"
		}
		line("connection", "connected for %s (since %s)%s", ago(c.Since), c.Since.Local().Format(time.DateTime), registered)
	case c.Phase == controlapi.PhaseBackoff:
		next := "now"
		if c.RetryAt != nil {
			next = "in " + ctlAge(c.RetryAt.Sub(st.Now))
		}
		line("connection", "disconnected for %s; next attempt %s (%s so far)", down, next, count(c.Attempt, "failed attempt"))
	case c.Phase == controlapi.PhaseConnecting:
		line("connection", "connecting (disconnected for %s, %s so far)", down, count(c.Attempt, "failed attempt"))
	default:
		line("connection", "%s for %s", c.Phase, ago(c.Since))
	}
	if c.HandshakesDropped > 0 && c.Phase != controlapi.PhaseConnected {
		line("handshakes", "%s", droppedHandshakesText(c.HandshakesDropped))
	}
	if c.LastError != "" {
		var when []string
		if c.LastErrorAt != nil {
			when = append(when, ago(*c.LastErrorAt)+" ago")
		}
		if c.LastErrorEarlier || (c.Phase == controlapi.PhaseConnected && c.LastErrorAt != nil && c.LastErrorAt.Before(c.Since)) {
			when = append(when, "from an earlier connection")
		}
		prefix := ""
		if len(when) > 0 {
			prefix = "(" + strings.Join(when, ", ") + ") "
		}
		line("last error", "%s%s", prefix, ctlClip(c.LastError, 160))
	}
	line("hub", "%s", st.HubURL)
	serverID := c.ServerID
	if serverID == "" {
		serverID = "-"
	}
	line("server id", "%s", serverID)
	line("node name", "%s", st.Name)
	line("sessions", "%d (%d reconnects)", c.Sessions, c.Reconnects)
	for _, o := range st.Observers {
		label := "observer " + o.Channel
		switch o.Phase {
		case controlapi.PhaseConnected:
			line(label, "connected for %s (%d sessions)", ago(o.Since), o.Sessions)
		case controlapi.PhaseBackoff:
			next := "now"
			if o.RetryAt != nil {
				next = "in " + ctlAge(o.RetryAt.Sub(st.Now))
			}
			line(label, "disconnected for %s; next attempt %s: %s", ago(o.Since), next, ctlClip(o.LastError, 120))
		default:
			line(label, "%s for %s", o.Phase, ago(o.Since))
		}
	}
	line("tools", "%d exposed, %d not exposed, %d unsupported, %d invalid (vcpnode tools --all)",
		st.Tools.Exposed, st.Tools.Hidden, st.Tools.Unsupported, st.Tools.Invalid)
	for _, m := range st.MCPServers {
		line("mcp "+m.Name, "%s", mcpServerLine(m, st.Now))
	}
	if b := st.ServerTools; b != nil {
		line("server tools", "%s", serverToolsLine(b))
	}
	if st.PlaceholderErrors > 0 {
		line("placeholders", "%d, %d failing (vcpnode placeholders shows the errors)", st.Placeholders, st.PlaceholderErrors)
	} else {
		line("placeholders", "%d (vcpnode placeholders)", st.Placeholders)
	}
	line("plugins", "%s", pluginsLine(st.Plugins))
	if sb := st.Sandbox; sb != nil {
		line("sandbox", "%s", sandboxLine(sb))
		if len(sb.NotEnforced) > 0 {
			line("not enforced", "%s", strings.Join(sb.NotEnforced, ", "))
		}
	}
	switch st.PendingApprovals {
	case 0:
		line("approvals", "none pending")
	default:
		line("approvals", "%d pending (vcpnode approvals)", st.PendingApprovals)
	}
	if st.ConfigFile != "" {
		line("config", "%s", st.ConfigFile)
	}
	line("socket", "%s", st.Socket)
	if st.Metrics != "" {
		line("metrics", "http://%s/metrics", st.Metrics)
	}
	line("in flight", "%d", len(st.InFlight))
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.InFlight) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TOOL\tREQUEST\tSTATE\tAGE\tDEADLINE IN")
	for _, call := range st.InFlight {
		state := call.State
		if call.Local {
			state += " (local)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", call.Tool, call.RequestID, state, ago(call.Started), ctlAge(call.Deadline.Sub(st.Now)))
	}
	return tw.Flush()
}

// mcpServerLine is one MCP server's state: what it offers while running,
// the next attempt and why while restarting.
func mcpServerLine(m controlapi.MCPServerStatus, now time.Time) string {
	ago := func(t time.Time) string { return ctlAge(now.Sub(t)) }
	var b strings.Builder
	switch m.State {
	case "running":
		fmt.Fprintf(&b, "running for %s, %s as %s (%s)", ago(m.Since), count(m.Tools, "tool"), m.Tool, m.Transport)
	case "restarting":
		next := "now"
		if m.RetryAt != nil {
			next = "in " + ctlAge(m.RetryAt.Sub(now))
		}
		fmt.Fprintf(&b, "restarting with backoff: next attempt %s (attempt %d, %s)", next, m.Attempt, count(m.Restarts, "restart"))
	default:
		fmt.Fprintf(&b, "%s for %s (%s)", m.State, ago(m.Since), m.Transport)
	}
	if m.State != "running" && m.LastError != "" {
		fmt.Fprintf(&b, "; last error: %s", ctlClip(m.LastError, 160))
	}
	return b.String()
}

// droppedHandshakesText says in plain words what handshakes the server
// drops before answering mean, for status and reconnect.
func droppedHandshakesText(n int) string {
	return fmt.Sprintf("the server dropped %s in a row before answering: likely a wrong key, "+
		"a wrong path in hub.url, a proxy in between, or a restarting server; "+
		"the node retries such handshakes at most once a minute (vcpnode reconnect retries now)", count(n, "handshake"))
}

// modeWords is [node] mode as status shows it.
func modeWords(mode string) string {
	switch mode {
	case config.ModeObserver:
		return "observer (the observer channels only)"
	case config.ModeBoth:
		return "both (the node connection and the observer channels)"
	}
	return mode
}

// phaseWords is a connection phase as the predicate of "the daemon is …".
func phaseWords(c controlapi.ConnectionStatus) string {
	switch c.Phase {
	case controlapi.PhaseConnected:
		if c.Registered {
			return "connected, with its tools registered"
		}
		if c.ToolsHeld {
			return "connected, with its tools held until vcpnode register"
		}
		return "connected and still registering its tools"
	case controlapi.PhaseConnecting:
		return "still connecting"
	case controlapi.PhaseBackoff:
		return "waiting to retry"
	case controlapi.PhaseStopping:
		return "stopping"
	case controlapi.PhaseStopped:
		return "stopped"
	default:
		return "in state " + string(c.Phase)
	}
}

// pluginsLine is the calls plugin processes run now and, when a plugin is
// warm, each pool's waiting interpreters out of its size.
func pluginsLine(p controlapi.PluginsStatus) string {
	s := fmt.Sprintf("calls running: %d", p.Calls)
	if len(p.Warm) == 0 {
		return s
	}
	pools := make([]string, 0, len(p.Warm))
	for _, w := range p.Warm {
		desc := fmt.Sprintf("%s %d/%d", w.Plugin, w.Waiting, w.Size)
		if w.Cold {
			desc += " (gave up: runs cold)"
		}
		pools = append(pools, desc)
	}
	return fmt.Sprintf("%s; warm interpreters waiting: %d (%s); calls run warm: %d", s, p.WarmWaiting, strings.Join(pools, ", "), p.WarmCalls)
}
