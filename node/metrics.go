package node

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/toolhost"
)

// telemetry is what the node records about itself for status, metrics and
// the audit file. It is built by New and lives as long as the node.
type telemetry struct {
	started time.Time
	metrics *nodeMetrics
	audit   *events.Audit
	usage   *toolUsage
}

// startTelemetry builds the metrics and the audit trail and hooks them to
// the dispatcher. An [audit] file that cannot be written is an error now
// rather than a warning at the first call.
func (n *Node) startTelemetry(cfg config.Config) error {
	t := &telemetry{started: time.Now()}
	t.audit = events.NewAudit(func() string { return n.Config().Audit.File }, n.Name, n.log)
	if err := t.audit.Check(cfg.Audit.File); err != nil {
		return err
	}
	n.tel = t
	t.metrics = newNodeMetrics(n)
	n.disp.Observe(t.metrics.observe)
	n.disp.Observe(t.audit.Record)
	t.usage = &toolUsage{tools: map[string]usage{}}
	n.disp.Observe(t.usage.observe)
	return nil
}

// Approvals is the broker of calls awaiting the owner (approval = "ask").
func (n *Node) Approvals() *toolhost.Approvals { return n.disp.Approvals() }

// MetricsHandler serves the node's metrics in the Prometheus text format,
// from its own sets (nothing registered globally). Label values (tool names)
// can come from plugin manifests or the server, so the answer passes
// through config.Redact; it is a few kilobytes, held whole, uncompressed.
func (n *Node) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		n.tel.metrics.write(&buf)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = io.WriteString(w, config.Redact(buf.String()))
	})
}

// unknownToolLabel stands for every name the server called that is not
// registered, so that the server cannot grow the label set without bound.
const unknownToolLabel = "(unknown)"

// metricFamily is one metric name with its help text and type, and the
// set holding its samples (one per label combination).
type metricFamily struct {
	name, help, kind string
	set              *metrics.Set
}

type nodeMetrics struct {
	families                  []*metricFamily
	calls, duration, approval *metricFamily
}

// callBuckets: 5ms to about 22 minutes, from in-process tools to long plugins.
var callBuckets = []float64{0.005, 0.02, 0.08, 0.32, 1.28, 5.12, 20.48, 81.92, 327.68, 1310.72}

func newNodeMetrics(n *Node) *nodeMetrics {
	m := &nodeMetrics{}
	family := func(name, kind, help string) *metricFamily {
		f := &metricFamily{name: name, help: help, kind: kind, set: metrics.NewSet()}
		m.families = append(m.families, f)
		return f
	}
	m.calls = family("vcpnode_calls_total", "counter", "Remote tool calls answered, by tool and outcome (ok, error, timeout, busy, denied…).")
	m.duration = family("vcpnode_call_duration_seconds", "histogram", "Time from accepting a remote call to answering it, queueing and approval included.")
	m.approval = family("vcpnode_approvals_total", "counter", "Remote calls of tools with approval = ask or deny, by decision (approved, denied, expired, refused).")
	state := func() ConnState { s, _ := n.State(); return s }
	conn := family("vcpnode_connection_state", "gauge", "1 for the phase the hub connection is in, 0 for the others.")
	for _, phase := range []Phase{PhaseConnecting, PhaseConnected, PhaseBackoff, PhaseStopping, PhaseStopped} {
		conn.set.NewGauge(conn.name+labels("state", string(phase)), func() float64 { return boolFloat(state().Phase == phase) })
	}
	load := func() (int, int) { return n.disp.Load() }
	for _, v := range []struct {
		name, kind, help string
		value            func() float64
	}{
		{"vcpnode_sessions_total", "counter", "Connections to the hub that were established.", func() float64 { return float64(state().Sessions) }},
		{"vcpnode_reconnects_total", "counter", "Connections established after the first one.", func() float64 { return float64(max(state().Sessions-1, 0)) }},
		{"vcpnode_calls_in_flight", "gauge", "Calls holding a concurrency slot now.", func() float64 { running, _ := load(); return float64(running) }},
		{"vcpnode_queue_depth", "gauge", "Calls waiting for a concurrency slot now.", func() float64 { _, queued := load(); return float64(queued) }},
		{"vcpnode_approvals_pending", "gauge", "Calls awaiting the owner's approval now.", func() float64 { return float64(n.disp.Approvals().Len()) }},
		{"vcpnode_placeholder_pushes_total", "counter", "Placeholder updates sent to the hub.", func() float64 { return float64(n.ph.Pushes()) }},
		{"vcpnode_plugin_kills_total", "counter", "Plugin processes killed (timeout, cancel, shutdown).", func() float64 { return float64(n.PluginKills()) }},
		{"vcpnode_plugin_warm_waiting", "gauge", "Warm plugin interpreters waiting for a call now.", func() float64 { return float64(n.PluginWarmWaiting()) }},
		{"vcpnode_plugin_warm_calls_total", "counter", "Plugin calls a warm interpreter ran.", func() float64 { return float64(n.PluginWarmCalls()) }},
		{"vcpnode_plugin_restarts_total", "counter", "Node.js hosts of direct plugins started again after they went away (crash, exit, kill).", func() float64 { return float64(n.plugins.direct.Restarts()) }},
	} {
		f := family(v.name, v.kind, v.help)
		f.set.NewGauge(f.name, v.value)
	}
	return m
}

// write writes every family with its help and type, then the Go runtime's
// and the process's own metrics.
func (m *nodeMetrics) write(w io.Writer) {
	for _, f := range m.families {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		f.set.WritePrometheus(w)
	}
	metrics.WriteGoMetrics(w)
	metrics.WriteProcessMetrics(w)
}

// labels formats label pairs (name, value, name, value…; names in sorted
// order) as a Prometheus label set, escaping the values.
func labels(pairs ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(pairs[i])
		b.WriteString(`="`)
		labelEscaper.WriteString(&b, pairs[i+1])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// observe counts a finished call. The owner's local calls (vcpnode call)
// are left out: the metrics describe the service the hub gets.
func (m *nodeMetrics) observe(rec toolhost.CallRecord) {
	if rec.Local {
		return
	}
	tool := rec.Tool
	if rec.Outcome == "unknown_tool" {
		tool = unknownToolLabel
	}
	m.calls.set.GetOrCreateCounter(m.calls.name + labels("outcome", rec.Outcome, "tool", tool)).Inc()
	m.duration.set.GetOrCreatePrometheusHistogramExt(m.duration.name+labels("tool", tool), callBuckets).Update(rec.Duration.Seconds())
	if rec.Approval != "" && rec.Approval != toolhost.DecisionAuto {
		m.approval.set.GetOrCreateCounter(m.approval.name + labels("decision", string(rec.Approval))).Inc()
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
