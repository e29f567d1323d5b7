package events

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// UnknownToolLabel stands for every name the server called that is not
// registered, so that the server cannot grow the label set without bound.
const UnknownToolLabel = "(unknown)"

// metricFamily is one metric name with its help text and type, and the
// set holding its samples (one per label combination).
type metricFamily struct {
	name, help, kind string
	set              *metrics.Set
}

// Metrics is the node's metrics in the Prometheus text format, from its own
// sets (nothing registered globally): calls counted from their records,
// and gauges the node reads from itself when they are written.
type Metrics struct {
	families                  []*metricFamily
	calls, duration, approval *metricFamily

	// The samples a call touches, by their labels: looked up without
	// building the sample's name, so that counting a call allocates
	// nothing once its labels were seen. Bounded as the sets are.
	mu        sync.RWMutex
	counters  map[callLabels]*metrics.Counter
	durations map[string]*metrics.PrometheusHistogram
}

type callLabels struct{ outcome, tool string }

// callBuckets: 5ms to about 22 minutes, from in-process tools to long plugins.
var callBuckets = []float64{0.005, 0.02, 0.08, 0.32, 1.28, 5.12, 20.48, 81.92, 327.68, 1310.72}

// NewMetrics returns Metrics with the call families and no gauges.
func NewMetrics() *Metrics {
	m := &Metrics{counters: map[callLabels]*metrics.Counter{}, durations: map[string]*metrics.PrometheusHistogram{}}
	m.calls = m.family("vcpnode_calls_total", "counter", "Remote tool calls answered, by tool and outcome (ok, error, timeout, busy, denied…).")
	m.duration = m.family("vcpnode_call_duration_seconds", "histogram", "Time from accepting a remote call to answering it, queueing and approval included.")
	m.approval = m.family("vcpnode_approvals_total", "counter", "Remote calls of tools with approval = ask or deny, by decision (approved, denied, expired, refused).")
	return m
}

func (m *Metrics) family(name, kind, help string) *metricFamily {
	f := &metricFamily{name: name, help: help, kind: kind, set: metrics.NewSet()}
	m.families = append(m.families, f)
	return f
}

// Gauge adds a family of kind ("counter" or "gauge") with one sample,
// value, read at each write.
func (m *Metrics) Gauge(name, kind, help string, value func() float64) {
	f := m.family(name, kind, help)
	f.set.NewGauge(f.name, value)
}

// StateGauge adds a gauge family with one sample per state, labelled
// label="state": 1 for the state current returns, 0 for the others.
func (m *Metrics) StateGauge(name, help, label string, states []string, current func() string) {
	f := m.family(name, "gauge", help)
	for _, s := range states {
		f.set.NewGauge(f.name+labels(label, s), func() float64 { return boolFloat(current() == s) })
	}
}

// Observe counts a finished call. The owner's local calls (vcpnode call)
// are left out: the metrics describe the service the hub gets; calls of
// the server's own tools are counted whoever made them, as they are the
// service this node takes from the server.
func (m *Metrics) Observe(rec toolhost.CallRecord) {
	if rec.Local && !rec.FromServer {
		return
	}
	tool := rec.Tool
	if rec.Outcome == "unknown_tool" {
		tool = UnknownToolLabel
	}
	counter, duration := m.callSamples(rec.Outcome, tool)
	counter.Inc()
	duration.Update(rec.Duration.Seconds())
	if rec.Approval != "" && rec.Approval != toolhost.DecisionAuto {
		m.approval.set.GetOrCreateCounter(m.approval.name + labels("decision", string(rec.Approval))).Inc()
	}
}

// callSamples returns the call counter of (outcome, tool) and the
// duration histogram of tool, creating them on their first call.
func (m *Metrics) callSamples(outcome, tool string) (*metrics.Counter, *metrics.PrometheusHistogram) {
	key := callLabels{outcome, tool}
	m.mu.RLock()
	c, h := m.counters[key], m.durations[tool]
	m.mu.RUnlock()
	if c != nil && h != nil {
		return c, h
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c = m.counters[key]; c == nil {
		c = m.calls.set.GetOrCreateCounter(m.calls.name + labels("outcome", outcome, "tool", tool))
		m.counters[key] = c
	}
	if h = m.durations[tool]; h == nil {
		h = m.duration.set.GetOrCreatePrometheusHistogramExt(m.duration.name+labels("tool", tool), callBuckets)
		m.durations[tool] = h
	}
	return c, h
}

// Write writes every family with its help and type, then the Go runtime's
// and the process's own metrics.
func (m *Metrics) Write(w io.Writer) {
	for _, f := range m.families {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		f.set.WritePrometheus(w)
	}
	metrics.WriteGoMetrics(w)
	metrics.WriteProcessMetrics(w)
}

// Handler serves the metrics. Label values (tool names) can come from
// plugin manifests or the server, so the answer passes through
// config.Redact; it is a few kilobytes, held whole, uncompressed.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		m.Write(&buf)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = io.WriteString(w, config.Redact(buf.String()))
	})
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

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
