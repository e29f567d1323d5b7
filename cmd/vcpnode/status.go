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
	"github.com/vcpnode/vcpnode/hubsession"
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
// aligned, one section after another, then the calls in flight as a table.
// A status field is shown by the printer of its section.
func printStatus(w io.Writer, st controlapi.StatusResponse) error {
	p := &statusLines{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), now: st.Now}
	for _, section := range statusSections {
		section(p, st)
	}
	if err := p.tw.Flush(); err != nil {
		return err
	}
	return printInFlight(w, st)
}

// statusSections print the status in the order people read it.
var statusSections = []func(*statusLines, controlapi.StatusResponse){
	printDaemonStatus,
	printConnectionStatus,
	printHubStatus,
	printObserversStatus,
	printToolsStatus,
	printPlaceholdersStatus,
	printPluginsStatus,
	printSandboxStatus,
	printApprovalsStatus,
	printEndpointsStatus,
}

// statusLines collects the aligned "label  value" lines of a status.
type statusLines struct {
	tw  *tabwriter.Writer
	now time.Time
}

func (p *statusLines) line(label, format string, args ...any) {
	fmt.Fprintf(p.tw, "%s\t%s\n", label, fmt.Sprintf(format, args...))
}

// ago is how long before the status t was.
func (p *statusLines) ago(t time.Time) string { return ctlAge(p.now.Sub(t)) }

func printDaemonStatus(p *statusLines, st controlapi.StatusResponse) {
	version := st.Version
	if version == "" {
		version = "(unknown version)"
	}
	p.line("vcpnode", "%s, pid %d, up %s", version, st.PID, p.ago(st.StartedAt))
	if st.Mode != "" && st.Mode != config.ModeDistributed {
		p.line("mode", "%s", modeWords(st.Mode))
	}
}

func printConnectionStatus(p *statusLines, st controlapi.StatusResponse) {
	c := st.Connection
	// Disconnected time counts from the drop, not from the current phase,
	// which restarts with every attempt; attempts are counted as in JSON.
	down := p.ago(c.Since)
	if !c.DisconnectedAt.IsZero() {
		down = p.ago(c.DisconnectedAt)
	}
	switch {
	case st.Mode == config.ModeObserver:
		p.line("connection", "none: observer mode keeps no distributed session")
	case c.Phase == controlapi.PhaseConnected:
		registered := ", tools registered"
		switch {
		case c.ToolsHeld:
			registered = ", tools not registered yet (register = false; vcpnode register)"
		case !c.Registered:
			registered = ", registering tools"
		}
		p.line("connection", "connected for %s (since %s)%s", p.ago(c.Since), c.Since.Local().Format(time.DateTime), registered)
	case c.Phase == controlapi.PhaseBackoff:
		p.line("connection", "disconnected for %s; next attempt %s (%s so far)", down, p.next(c.RetryAt), count(c.Attempt, "failed attempt"))
	case c.Phase == controlapi.PhaseConnecting:
		p.line("connection", "connecting (disconnected for %s, %s so far)", down, count(c.Attempt, "failed attempt"))
	default:
		p.line("connection", "%s for %s", c.Phase, p.ago(c.Since))
	}
	if c.HandshakesDropped > 0 && c.Phase != controlapi.PhaseConnected {
		p.line("handshakes", "%s", droppedHandshakesText(c.HandshakesDropped))
	}
	if c.LastError != "" {
		var when []string
		if !c.LastErrorAt.IsZero() {
			when = append(when, p.ago(c.LastErrorAt)+" ago")
		}
		if c.LastErrorEarlier || (c.Phase == controlapi.PhaseConnected && !c.LastErrorAt.IsZero() && c.LastErrorAt.Before(c.Since)) {
			when = append(when, "from an earlier connection")
		}
		prefix := ""
		if len(when) > 0 {
			prefix = "(" + strings.Join(when, ", ") + ") "
		}
		p.line("last error", "%s%s", prefix, ctlClip(c.LastError, 160))
	}
}

// next is when a retry at is due: "now" when not known or past due.
func (p *statusLines) next(at time.Time) string {
	if at.IsZero() {
		return "now"
	}
	return "in " + ctlAge(at.Sub(p.now))
}

func printHubStatus(p *statusLines, st controlapi.StatusResponse) {
	p.line("hub", "%s", st.HubURL)
	remembered := ""
	if st.Connection.AuthRemembered {
		remembered = "; the way remembered from an earlier run"
	}
	switch st.Connection.Auth {
	case "header":
		p.line("key sent", "in the Authorization header, on the key-less path%s", remembered)
	case "path":
		p.line("key sent", "in the URL path (the server does not take the header)%s", remembered)
	}
	serverID := st.Connection.ServerID
	if serverID == "" {
		serverID = "-"
	}
	p.line("server id", "%s", serverID)
	p.line("node name", "%s", st.Name)
	p.line("sessions", "%d (%d reconnects)", st.Connection.Sessions, st.Connection.Reconnects)
}

func printObserversStatus(p *statusLines, st controlapi.StatusResponse) {
	for _, o := range st.Observers {
		label := "observer " + o.Channel
		switch o.Phase {
		case controlapi.PhaseConnected:
			p.line(label, "connected for %s (%d sessions)", p.ago(o.Since), o.Sessions)
		case controlapi.PhaseBackoff:
			next := "now"
			if o.RetryAt != nil {
				next = p.next(*o.RetryAt)
			}
			p.line(label, "disconnected for %s; next attempt %s: %s", p.ago(o.Since), next, ctlClip(o.LastError, 120))
		default:
			p.line(label, "%s for %s", o.Phase, p.ago(o.Since))
		}
	}
}

func printToolsStatus(p *statusLines, st controlapi.StatusResponse) {
	p.line("tools", "%d exposed, %d not exposed, %d unsupported, %d invalid (vcpnode tools --all)",
		st.Tools.Exposed, st.Tools.Hidden, st.Tools.Unsupported, st.Tools.Invalid)
	if len(st.ServerNames) > 0 {
		p.line("server names", "%s", serverNamesText(st.ServerNames))
	}
	for _, c := range st.PluginChanges {
		p.line("plugin changed", "%s", ctlClip(c, 200))
	}
	for _, m := range st.MCPServers {
		p.line("mcp "+m.Name, "%s", mcpServerLine(m, st.Now))
	}
	if b := st.ServerTools; b != nil {
		p.line("server tools", "%s", serverToolsLine(b))
		for _, w := range b.Warnings {
			p.line("server tools", "%s", ctlClip(w, 200))
		}
	}
	for _, s := range st.Sources {
		p.line("source "+s.Name, "%s", s.Summary)
	}
}

func printPlaceholdersStatus(p *statusLines, st controlapi.StatusResponse) {
	if st.PlaceholderErrors > 0 {
		p.line("placeholders", "%d, %d failing (vcpnode placeholders shows the errors)", st.Placeholders, st.PlaceholderErrors)
	} else {
		p.line("placeholders", "%d (vcpnode placeholders)", st.Placeholders)
	}
}

func printPluginsStatus(p *statusLines, st controlapi.StatusResponse) {
	p.line("plugins", "%s", pluginsLine(st.Plugins))
}

func printSandboxStatus(p *statusLines, st controlapi.StatusResponse) {
	if sb := st.Sandbox; sb != nil {
		p.line("sandbox", "%s", sandboxLine(sb))
		if len(sb.NotEnforced) > 0 {
			p.line("not enforced", "%s", strings.Join(sb.NotEnforced, ", "))
		}
	}
}

func printApprovalsStatus(p *statusLines, st controlapi.StatusResponse) {
	switch st.PendingApprovals {
	case 0:
		p.line("approvals", "none pending")
	default:
		p.line("approvals", "%d pending (vcpnode approvals)", st.PendingApprovals)
	}
}

// printEndpointsStatus: where the daemon is reached, and the count of
// the calls in flight the table below lists.
func printEndpointsStatus(p *statusLines, st controlapi.StatusResponse) {
	if st.ConfigFile != "" {
		p.line("config", "%s", st.ConfigFile)
	}
	p.line("socket", "%s", st.Socket)
	if st.Metrics != "" {
		p.line("metrics", "http://%s/metrics", st.Metrics)
	}
	p.line("in flight", "%d", len(st.InFlight))
}

// printInFlight is the table of the calls in flight, if any.
func printInFlight(w io.Writer, st controlapi.StatusResponse) error {
	if len(st.InFlight) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TOOL\tREQUEST\tSTATE\tAGE\tDEADLINE IN")
	for _, call := range st.InFlight {
		state := call.State
		if call.Local {
			state += " (local)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", call.Tool, call.RequestID, state, ctlAge(st.Now.Sub(call.Started)), ctlAge(call.Deadline.Sub(st.Now)))
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
		if m.StartBudget != "" {
			fmt.Fprintf(&b, ", %s", m.StartBudget)
		}
	}
	if m.State != "running" && m.LastError != "" {
		fmt.Fprintf(&b, "; last error: %s", ctlClip(m.LastError, 160))
	}
	return b.String()
}

// droppedHandshakesText says in plain words what handshakes the server
// drops before answering mean, for status and reconnect.
func droppedHandshakesText(n int) string {
	return fmt.Sprintf("the server dropped %s in a row before answering: %s; "+
		"the node retries such handshakes at most once a minute (vcpnode reconnect retries now)",
		count(n, "handshake"), hubsession.DroppedHandshakeCauses)
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
