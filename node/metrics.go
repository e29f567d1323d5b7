package node

import (
	"net/http"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/toolhost"
)

// telemetry is what the node records about itself for status, metrics and
// the audit file. It is built by New and lives as long as the node.
type telemetry struct {
	started time.Time
	metrics *events.Metrics
	audit   *events.Audit
	usage   *events.Usage
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
	t.metrics = newMetrics(n)
	n.disp.Observe(t.metrics.Observe)
	n.disp.Observe(t.audit.Record)
	t.usage = events.NewUsage()
	n.disp.Observe(t.usage.Observe)
	return nil
}

// Approvals is the broker of calls awaiting the owner (approval = "ask").
func (n *Node) Approvals() *toolhost.Approvals { return n.disp.Approvals() }

// MetricsHandler serves the node's metrics in the Prometheus text format.
func (n *Node) MetricsHandler() http.Handler { return n.tel.metrics.Handler() }

// newMetrics is the call metrics and the gauges read from the node.
func newMetrics(n *Node) *events.Metrics {
	m := events.NewMetrics()
	state := func() ConnState { s, _ := n.State(); return s }
	var phases []string
	for _, p := range []Phase{PhaseConnecting, PhaseConnected, PhaseBackoff, PhaseStopping, PhaseStopped} {
		phases = append(phases, string(p))
	}
	m.StateGauge("vcpnode_connection_state", "1 for the phase the hub connection is in, 0 for the others.", "state", phases,
		func() string { return string(state().Phase) })
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
		{"vcpnode_plugin_restarts_total", "counter", "Node.js hosts of direct plugins started again after they went away (crash, exit, kill).", func() float64 { return float64(n.plugins.Restarts()) }},
	} {
		m.Gauge(v.name, v.kind, v.help, v.value)
	}
	return m
}
