package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
)

// percentile is the p-th percentile (0-100) of xs by linear interpolation
// between the closest ranks; NaN for none.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo))
}

func median(xs []float64) float64 { return percentile(xs, 50) }

// higherIsBetter says which way a metric improves: calls per second up,
// milliseconds and MiB down.
func higherIsBetter(metric string) bool { return strings.HasSuffix(metric, "(calls/s)") }

// target is one of the goals the table is checked against.
type target struct {
	name   string
	ratio  float64 // measured
	limit  float64
	atMost bool // the ratio must be at most limit, else at least
}

func (t target) verdict() string {
	if math.IsNaN(t.ratio) {
		return "not measured"
	}
	if (t.atMost && t.ratio <= t.limit) || (!t.atMost && t.ratio >= t.limit) {
		return fmt.Sprintf("%.2f×: holds", t.ratio)
	}
	return fmt.Sprintf("%.2f×: **missed** by %.2f×", t.ratio, math.Abs(t.ratio-t.limit))
}

func (r *results) med(metric, node string) float64 { return median(r.values[metric][node]) }

func (r *results) targets() []target {
	const v, off = "vcpnode", "official"
	return []target{
		{name: "1 KiB files at 64 in flight, vcpnode ÷ official calls/s (≥ 2×)",
			ratio: r.med(mFile1K64, v) / r.med(mFile1K64, off), limit: 2},
		{name: "Python warm ÷ cold p50, vcpnode (≤ 0.3×)",
			ratio: r.med(mPyWarmP50, v) / r.med(mPyColdP50, v), limit: 0.3, atMost: true},
		{name: "Python warm with its import preloaded ÷ cold p50, vcpnode (≤ 0.3×)",
			ratio: r.med(mPyPreP50, v) / r.med(mPyColdP50, v), limit: 0.3, atMost: true},
		{name: "10 MiB file p50, vcpnode ÷ official (≤ 1× here; compare with earlier runs)",
			ratio: r.med(mFile10MP50, v) / r.med(mFile10MP50, off), limit: 1, atMost: true},
	}
}

var metricOrder = []string{mShP50, mSh16, mSh16CPU, mPyColdP50, mPyWarmP50, mPyPreP50, mJsColdP50, mJsWarmP50,
	mFile1K64, mFileCPU, mFileHubCPU, mFile10MP50, mFile10MPeak, mIdleMain, mIdleTree}

// officialNote is what the official node's cell of a vcpnode-only mode
// says: it runs the same plugin cold.
var officialNote = map[string]string{
	mPyWarmP50: " (no warm mode: cold)",
	mPyPreP50:  " (no warm or preload mode: cold)",
	mJsWarmP50: " (no warm mode: cold)",
}

// warmRatios are the warm rows and the cold row each is compared with.
var warmRatios = []struct{ name, warm, cold string }{
	{"Python", mPyWarmP50, mPyColdP50},
	{"Python, json preloaded", mPyPreP50, mPyColdP50},
	{"Node.js", mJsWarmP50, mJsColdP50},
}

// markdown renders the medians over the rounds, their ranges and the ratios.
func (r *results) markdown() string {
	var b strings.Builder
	server := "a minimal server speaking the same protocol (no -toolbox given)"
	if r.toolbox {
		server = "VCPToolBox's own WebSocketServer.js"
	}
	fmt.Fprintf(&b, "Started %s; %d interleaved rounds (the order of the nodes alternates); server: %s.\n",
		r.started.Format("2006-01-02 15:04 MST"), r.rounds, server)
	fmt.Fprintf(&b, "Load average %.1f %.1f %.1f at the start, %.1f %.1f %.1f at the end; %d CPUs (%s/%s).\n",
		r.load[0][0], r.load[0][1], r.load[0][2], r.load[1][0], r.load[1][1], r.load[1][2], runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "Python and Node.js plugin calls are %s apart. Each cell: median of the rounds [min–max].\n\n", r.pyGap)
	fmt.Fprintf(&b, "| measure | calls per round | vcpnode | official node | vcpnode ÷ official |\n|---|---|---|---|---|\n")
	for _, m := range metricOrder {
		vals := r.values[m]
		if vals == nil {
			continue
		}
		calls := "–"
		if n, ok := r.calls[m]; ok {
			calls = fmt.Sprint(n)
		}
		cells := []string{}
		for _, node := range []string{"vcpnode", "official"} {
			cells = append(cells, cell(vals[node]))
		}
		cells[1] += officialNote[m]
		ratio := fmt.Sprintf("%.2f× (lower is better)", median(vals["vcpnode"])/median(vals["official"]))
		switch {
		case m == mFileHubCPU:
			ratio = "the same server's load for each node"
		case higherIsBetter(m):
			ratio = strings.Replace(ratio, "lower", "higher", 1)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m, calls, cells[0], cells[1], ratio)
	}
	b.WriteString("\n")
	for _, w := range warmRatios {
		warm, cold := r.values[w.warm]["vcpnode"], r.values[w.cold]["vcpnode"]
		if len(warm) > 0 && len(cold) > 0 {
			fmt.Fprintf(&b, "- vcpnode warm ÷ cold p50, %s: %.2f×\n", w.name, median(warm)/median(cold))
		}
	}
	for _, m := range metricOrder {
		for _, node := range []string{"vcpnode", "official"} {
			if f := r.failed[m][node]; f != nil && f.failed > 0 {
				fmt.Fprintf(&b, "- %s, %s: %d of %d calls failed or answered wrongly (timed like the others), the first: %s\n", m, node, f.failed, f.calls, f.first)
			}
		}
	}
	for _, t := range r.targets() {
		fmt.Fprintf(&b, "- %s: %s\n", t.name, t.verdict())
	}
	return b.String()
}

func cell(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%s [%s–%s]", num(median(xs)), num(slices.Min(xs)), num(slices.Max(xs)))
}

// num prints with about three significant digits, thousands separated.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.Abs(x) >= 100:
		return thousands(int64(math.Round(x)))
	case math.Abs(x) >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var parts []string
	for len(s) > 3 {
		parts = append([]string{s[len(s)-3:]}, parts...)
		s = s[:len(s)-3]
	}
	parts = append([]string{s}, parts...)
	out := strings.Join(parts, ",")
	if neg {
		out = "-" + out
	}
	return out
}
