package events

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
	text := b.String()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	f := families["x_total"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("x_total: %v in %q", f, text)
	}
	got := map[string]string{}
	for _, l := range f.GetMetric()[0].GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	if got["tool"] != name || got["outcome"] != "ok" || f.GetMetric()[0].GetUntyped().GetValue() != 1 {
		t.Fatalf("x_total labels %q, value %v in %q", got, f.GetMetric()[0].GetUntyped().GetValue(), text)
	}
}
