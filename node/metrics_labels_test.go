package node

import (
	"bytes"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A tool name with quotes, backslashes or a newline (plugin manifests are
// free text) still makes one well-formed sample with that exact label.
func TestMetricLabelsAreEscaped(t *testing.T) {
	name := "a\"b\\c\nd}"
	set := metrics.NewSet()
	set.GetOrCreateCounter("x_total" + labels("outcome", "ok", "tool", name)).Inc()
	var b bytes.Buffer
	set.WritePrometheus(&b)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("parse %q: %v", b.String(), err)
	}
	if got, ok := metricValue(families, "x_total", map[string]string{"tool": name, "outcome": "ok"}); !ok || got != 1 {
		t.Fatalf("x_total{tool=%q} = %v, %v in %q", name, got, ok, b.String())
	}
}
