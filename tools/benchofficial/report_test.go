package main

import (
	"math"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{4, 1, 3, 2}, 50, 2.5},
		{[]float64{10}, 50, 10},
		{[]float64{1, 2, 3, 4, 5}, 0, 1},
		{[]float64{1, 2, 3, 4, 5}, 100, 5},
		{[]float64{1, 2, 3, 4, 5}, 90, 4.6},
	}
	for _, c := range cases {
		if got := percentile(c.xs, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
	if got := percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("percentile of nothing = %v, want NaN", got)
	}
	xs := []float64{3, 1, 2}
	percentile(xs, 50)
	if xs[0] != 3 {
		t.Errorf("percentile sorted its argument: %v", xs)
	}
}

func TestTargetVerdict(t *testing.T) {
	cases := []struct {
		t    target
		want string
	}{
		{target{ratio: 2.5, limit: 2}, "2.50×: holds"},
		{target{ratio: 1.5, limit: 2}, "1.50×: **missed** by 0.50×"},
		{target{ratio: 0.25, limit: 0.3, atMost: true}, "0.25×: holds"},
		{target{ratio: 0.45, limit: 0.3, atMost: true}, "0.45×: **missed** by 0.15×"},
		{target{ratio: math.NaN(), limit: 2}, "not measured"},
	}
	for _, c := range cases {
		if got := c.t.verdict(); got != c.want {
			t.Errorf("%+v: verdict %q, want %q", c.t, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	for x, want := range map[float64]string{1234567.4: "1,234,567", 3048.2: "3,048", 107.4: "107", 54.51: "54.5", 0.371: "0.37", -1234: "-1,234"} {
		if got := num(x); got != want {
			t.Errorf("num(%v) = %q, want %q", x, got, want)
		}
	}
}

func TestMarkdownRatiosAndTargets(t *testing.T) {
	r := &results{values: map[string]map[string][]float64{}, rounds: 3, calls: map[string]int{mFile1K64: 4000},
		failed: map[string]map[string]*failures{}}
	for _, v := range []float64{3000, 1000, 2000} { // median 2000
		r.add(mFile1K64, "vcpnode", v)
	}
	for _, v := range []float64{900, 1100, 1000} { // median 1000
		r.add(mFile1K64, "official", v)
	}
	r.add(mPyColdP50, "vcpnode", 100)
	r.add(mPyWarmP50, "vcpnode", 40)
	r.add(mPyColdP50, "official", 150)
	r.add(mPyWarmP50, "official", 150)
	r.add(mPyPreP50, "vcpnode", 15)
	r.add(mPyPreP50, "official", 150)
	r.add(mJsColdP50, "vcpnode", 80)
	r.add(mJsWarmP50, "vcpnode", 20)
	r.count(mSh16, "official", runResult{Errors: 2, FirstError: `result "" lacks pong`}, 64)
	out := r.markdown()
	for _, want := range []string{
		"| 1 KiB file, 64 in flight (calls/s) | 4000 | 2,000 [1,000–3,000] | 1,000 [900–1,100] | 2.00× (higher is better) |",
		"| Python plugin warm, p50 (ms) | – | 40.0 [40.0–40.0] | 150 [150–150] (no warm mode: cold) | 0.27× (lower is better) |",
		"- 1 KiB files at 64 in flight, vcpnode ÷ official calls/s (≥ 2×): 2.00×: holds",
		"- Python warm ÷ cold p50, vcpnode (≤ 0.3×): 0.40×: **missed** by 0.10×",
		"- Python warm with its import preloaded ÷ cold p50, vcpnode (≤ 0.3×): 0.15×: holds",
		"| Python plugin warm, json preloaded, p50 (ms) | – | 15.0 [15.0–15.0] | 150 [150–150] (no warm or preload mode: cold) | 0.10× (lower is better) |",
		"- vcpnode warm ÷ cold p50, Python: 0.40×",
		"- vcpnode warm ÷ cold p50, Python, json preloaded: 0.15×",
		"- vcpnode warm ÷ cold p50, Node.js: 0.25×",
		`official: 2 of 64 calls failed or answered wrongly (timed like the others), the first: result "" lacks pong`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sh plugin, p50") {
		t.Errorf("a metric without values got a row:\n%s", out)
	}
}
