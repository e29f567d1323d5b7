package events

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Counting a call whose labels were seen before allocates nothing (it is
// on every call's path), and every call still lands in its own samples.
func TestObserveCountsWithoutAllocating(t *testing.T) {
	m := NewMetrics()
	ok := toolhost.CallRecord{Tool: "Echo", Outcome: "ok", Duration: 3 * time.Millisecond}
	failed := toolhost.CallRecord{Tool: "Echo", Outcome: "error", Duration: time.Second}
	m.Observe(ok)
	m.Observe(failed)
	if allocs := testing.AllocsPerRun(100, func() { m.Observe(ok) }); allocs != 0 {
		t.Errorf("Observe of a seen tool and outcome: %v allocations per call, want 0", allocs)
	}
	var b bytes.Buffer
	m.Write(&b)
	for _, want := range []string{
		`vcpnode_calls_total{outcome="ok",tool="Echo"} 102`,
		`vcpnode_calls_total{outcome="error",tool="Echo"} 1`,
		`vcpnode_call_duration_seconds_count{tool="Echo"} 103`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, b.String())
		}
	}
}

// Calls of several tools and outcomes at once each count once.
func TestObserveConcurrently(t *testing.T) {
	m := NewMetrics()
	done := make(chan struct{})
	for _, tool := range []string{"A", "B", "C", "D"} {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				outcome := "ok"
				if i%2 == 1 {
					outcome = "error"
				}
				m.Observe(toolhost.CallRecord{Tool: tool, Outcome: outcome})
			}
		}()
	}
	for range 4 {
		<-done
	}
	var b bytes.Buffer
	m.Write(&b)
	for _, tool := range []string{"A", "B", "C", "D"} {
		for _, outcome := range []string{"ok", "error"} {
			want := `vcpnode_calls_total{outcome="` + outcome + `",tool="` + tool + `"} 100`
			if !strings.Contains(b.String(), want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	}
}
