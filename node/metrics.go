package node

import (
	"bytes"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// telemetry is what the node records about itself for status, metrics and
// the audit file. It is built by New and lives as long as the node.
type telemetry struct {
	started time.Time
	metrics *nodeMetrics
	audit   *auditLog
}

// startTelemetry builds the metrics and the audit trail and hooks them to
// the dispatcher. An [audit] file that cannot be written is an error now
// rather than a warning at the first call.
func (n *Node) startTelemetry(cfg config.Config) error {
	t := &telemetry{started: time.Now()}
	t.audit = newAuditLog(n)
	if err := t.audit.check(cfg.Audit.File); err != nil {
		return err
	}
	n.tel = t
	t.metrics = newNodeMetrics(n)
	n.disp.Observe(t.metrics.observe)
	n.disp.Observe(t.audit.record)
	return nil
}

// Approvals is the broker of calls awaiting the owner (approval = "ask").
func (n *Node) Approvals() *toolhost.Approvals { return n.disp.Approvals() }

// MetricsHandler serves the node's metrics in the Prometheus text format,
// from its own registry (nothing registered globally).
func (n *Node) MetricsHandler() http.Handler {
	h := promhttp.HandlerFor(n.tel.metrics.reg, promhttp.HandlerOpts{Registry: n.tel.metrics.reg})
	return redactedHandler(h)
}

// redactedHandler passes h's answer through config.Redact: label values
// (tool names) can come from plugin manifests or the server. The answer is
// held whole, which is fine for the few kilobytes of metrics; compression is
// left out so the text can be read.
func redactedHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		rec := &heldResponse{header: http.Header{}, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.code)
		_, _ = io.WriteString(w, config.Redact(rec.body.String()))
	})
}

// heldResponse keeps an answer in memory for redactedHandler.
type heldResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header         { return h.header }
func (h *heldResponse) WriteHeader(code int)        { h.code = code }
func (h *heldResponse) Write(p []byte) (int, error) { return h.body.Write(p) }

// unknownToolLabel stands for every name the server called that is not
// registered, so that the server cannot grow the label set without bound.
const unknownToolLabel = "(unknown)"

type nodeMetrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	approvals *prometheus.CounterVec
}

func newNodeMetrics(n *Node) *nodeMetrics {
	m := &nodeMetrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vcpnode_calls_total",
			Help: "Remote tool calls answered, by tool and outcome (ok, error, timeout, busy, denied…).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vcpnode_call_duration_seconds",
			Help: "Time from accepting a remote call to answering it, queueing and approval included.",
			// 5ms to about 22 minutes: from in-process tools to long plugins.
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 10),
		}, []string{"tool"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vcpnode_approvals_total",
			Help: "Remote calls of tools with approval = ask or deny, by decision (approved, denied, expired, refused).",
		}, []string{"decision"}),
	}
	state := func() ConnState { s, _ := n.State(); return s }
	for _, phase := range []Phase{PhaseConnecting, PhaseConnected, PhaseBackoff, PhaseStopping, PhaseStopped} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "vcpnode_connection_state",
			Help:        "1 for the phase the hub connection is in, 0 for the others.",
			ConstLabels: prometheus.Labels{"state": string(phase)},
		}, func() float64 { return boolFloat(state().Phase == phase) }))
	}
	load := func() (int, int) { return n.disp.Load() }
	m.reg.MustRegister(
		m.calls, m.duration, m.approvals,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vcpnode_sessions_total", Help: "Connections to the hub that were established.",
		}, func() float64 { return float64(state().Sessions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vcpnode_reconnects_total", Help: "Connections established after the first one.",
		}, func() float64 { return float64(max(state().Sessions-1, 0)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vcpnode_calls_in_flight", Help: "Calls holding a concurrency slot now.",
		}, func() float64 { running, _ := load(); return float64(running) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vcpnode_queue_depth", Help: "Calls waiting for a concurrency slot now.",
		}, func() float64 { _, queued := load(); return float64(queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vcpnode_approvals_pending", Help: "Calls awaiting the owner's approval now.",
		}, func() float64 { return float64(n.disp.Approvals().Len()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vcpnode_placeholder_pushes_total", Help: "Placeholder updates sent to the hub.",
		}, func() float64 { return float64(n.ph.pushes.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vcpnode_plugin_kills_total", Help: "Plugin processes killed (timeout, cancel, shutdown).",
		}, func() float64 { return float64(n.PluginKills()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vcpnode_plugin_restarts_total", Help: "Node.js hosts of direct plugins started again after they went away (crash, exit, kill).",
		}, func() float64 { return float64(n.plugins.direct.Restarts()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

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
	m.calls.WithLabelValues(tool, rec.Outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(rec.Duration.Seconds())
	if rec.Approval != "" && rec.Approval != toolhost.DecisionAuto {
		m.approvals.WithLabelValues(string(rec.Approval)).Inc()
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
