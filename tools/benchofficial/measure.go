package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// The table's rows, in order.
const (
	mShP50       = "sh plugin, p50 latency (ms)"
	mSh16        = "sh plugin, 16 in flight (calls/s)"
	mPyColdP50   = "Python plugin cold, p50 (ms)"
	mPyWarmP50   = "Python plugin warm, p50 (ms)"
	mPyPreP50    = "Python plugin warm, json preloaded, p50 (ms)"
	mJsColdP50   = "Node.js plugin cold, p50 (ms)"
	mJsWarmP50   = "Node.js plugin warm, p50 (ms)"
	mFile1K64    = "1 KiB file, 64 in flight (calls/s)"
	mFile10MP50  = "10 MiB file, p50 (ms)"
	mFile10MPeak = "10 MiB file, peak RSS of the tree (MiB)"
	mSh16CPU     = "sh plugin, 16 in flight: node CPU per call (ms)"
	mFileCPU     = "1 KiB file, 64 in flight: node CPU per call (ms)"
	mFileHubCPU  = "1 KiB file, 64 in flight: server CPU busy (%)"
	mIdleMain    = "idle RSS, main process (MiB)"
	mIdleTree    = "idle RSS, process tree (MiB)"
)

// scenario is one kind of call, timed against each node in turn.
type scenario struct {
	metric string
	req    runRequest // without Server
	// warmup is the untimed calls first, as many in flight as req: V8
	// compiles the official node's and the server's hot paths only after
	// many calls, and a cold one costs the official node twice the CPU.
	warmup   int
	quick    int    // Count with -quick
	peak     string // also record the tree's peak RSS under this metric
	cpu      string // also record the node's CPU per call under this metric
	hubCPU   string // and the server's CPU use, in % of one core
	perCall  bool   // the metric is p50 latency, else calls per second
	pyGapped bool   // calls spaced by -pygap (interpreted plugins: a warm pool refills)
}

// selected reports whether -only lets s run.
func (s scenario) selected(o options) bool { return strings.Contains(s.metric, o.only) }

func scenarios(w workdir) []scenario {
	fileArgs := func(size int) map[string]any {
		return map[string]any{"fileUrl": (&url.URL{Scheme: "file", Path: w.file(size)}).String()}
	}
	ping := map[string]any{"command": "Ping", "text": "hello"}
	// A Python or Node.js plugin's calls: one at a time, spaced by -pygap.
	interpreted := func(metric, tool string) scenario {
		return scenario{metric: metric, perCall: true, pyGapped: true, warmup: 2, quick: 5,
			req: runRequest{Tool: tool, Args: ping, Count: 25, Inflight: 1, ExpectText: "pong"}}
	}
	return []scenario{
		{metric: mShP50, perCall: true, warmup: 3, quick: 10,
			req: runRequest{Tool: "BenchSh", Args: ping, Count: 60, Inflight: 1, ExpectText: "pong"}},
		{metric: mSh16, cpu: mSh16CPU, warmup: 16, quick: 48,
			req: runRequest{Tool: "BenchSh", Args: ping, Count: 320, Inflight: 16, ExpectText: "pong"}},
		interpreted(mPyColdP50, "BenchPy"),
		interpreted(mPyWarmP50, "BenchPyWarm"),
		interpreted(mPyPreP50, "BenchPyPreload"),
		interpreted(mJsColdP50, "BenchJs"),
		interpreted(mJsWarmP50, "BenchJsWarm"),
		{metric: mFile1K64, cpu: mFileCPU, hubCPU: mFileHubCPU, warmup: 1000, quick: 640,
			req: runRequest{Tool: "internal_request_file", Args: fileArgs(smallFile), Count: 4000, Inflight: 64, ExpectFileBytes: smallFile}},
		{metric: mFile10MP50, perCall: true, peak: mFile10MPeak, warmup: 1, quick: 3,
			req: runRequest{Tool: "internal_request_file", Args: fileArgs(largeFile), Count: 10, Inflight: 1, ExpectFileBytes: largeFile}},
	}
}

// results holds each metric's value per node and round.
type results struct {
	nodes   []string // in the table's column order
	values  map[string]map[string][]float64
	rounds  int
	toolbox bool
	load    [2][3]float64 // load averages at the start and the end
	started time.Time
	calls   map[string]int // timed calls per round, by metric
	// failed counts calls that failed or returned a wrong result, by
	// metric and node, with the first error seen.
	failed map[string]map[string]*failures
	pyGap  time.Duration
}

func (r *results) add(metric, node string, v float64) {
	if r.values[metric] == nil {
		r.values[metric] = map[string][]float64{}
	}
	r.values[metric][node] = append(r.values[metric][node], v)
}

type failures struct {
	calls, failed int
	first         string
}

// count records a run's failed calls; warm-up calls count too.
func (r *results) count(metric, node string, out runResult, calls int) {
	if r.failed[metric] == nil {
		r.failed[metric] = map[string]*failures{}
	}
	f := r.failed[metric][node]
	if f == nil {
		f = &failures{}
		r.failed[metric][node] = f
	}
	f.calls += calls
	f.failed += out.Errors
	if f.first == "" {
		f.first = out.FirstError
	}
}

func measure(ctx context.Context, hub *hubClient, nodes []*nodeProc, w workdir, o options) (*results, error) {
	res := &results{values: map[string]map[string][]float64{}, rounds: o.rounds, toolbox: hub.toolbox,
		started: time.Now().UTC(), calls: map[string]int{}, pyGap: o.pyGap,
		failed: map[string]map[string]*failures{}}
	for _, n := range nodes {
		res.nodes = append(res.nodes, n.name)
	}
	res.load[0] = loadAverage()
	for round := range o.rounds {
		order := slices.Clone(nodes)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		// Both nodes sit idle together before each round.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.idle):
		}
		for _, n := range nodes {
			main, err := statusField(n.pid(), "VmRSS")
			if err != nil {
				return nil, err
			}
			tree, err := treeRSS(n.pid())
			if err != nil {
				return nil, err
			}
			res.add(mIdleMain, n.name, mib(main))
			res.add(mIdleTree, n.name, mib(tree))
		}
		for _, s := range scenarios(w) {
			if !s.selected(o) {
				continue
			}
			if o.quick {
				s.req.Count = s.quick
			}
			if s.pyGapped {
				s.req.GapMs = int(o.pyGap / time.Millisecond)
			}
			for _, m := range []string{s.metric, s.cpu, s.hubCPU} {
				if m != "" {
					res.calls[m] = s.req.Count
				}
			}
			for _, n := range order {
				if err := runScenario(ctx, hub, n, s, res); err != nil {
					return nil, fmt.Errorf("round %d, %s: %w", round+1, s.metric, err)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "round %d of %d done, load %.1f\n", round+1, o.rounds, loadAverage()[0])
	}
	res.load[1] = loadAverage()
	return res, nil
}

func runScenario(ctx context.Context, hub *hubClient, n *nodeProc, s scenario, res *results) error {
	req := s.req
	req.Server = n.server
	if s.warmup > 0 {
		warm := req
		warm.Count = s.warmup
		out, err := hub.run(ctx, warm)
		res.count(s.metric, n.name, out, warm.Count)
		if err != nil {
			return fmt.Errorf("%s warm-up: %w", n.name, err)
		}
	}
	var peak *peakSampler
	if s.peak != "" {
		if err := resetPeak(n.pid()); err != nil {
			return err
		}
		peak = startPeakSampler(n.pid())
	}
	cpu0, err := cpuTime(n.pid())
	if err != nil {
		return err
	}
	hub0, err := cpuTime(hub.pid())
	if err != nil {
		return err
	}
	out, err := hub.run(ctx, req)
	res.count(s.metric, n.name, out, req.Count)
	if s.cpu != "" && err == nil {
		cpu1, err := cpuTime(n.pid())
		if err != nil {
			return err
		}
		res.add(s.cpu, n.name, float64(cpu1-cpu0)/float64(time.Millisecond)/float64(req.Count))
	}
	if s.hubCPU != "" && err == nil {
		hub1, err := cpuTime(hub.pid())
		if err != nil {
			return err
		}
		res.add(s.hubCPU, n.name, 100*float64(hub1-hub0)/float64(time.Millisecond)/out.WallMs)
	}
	if peak != nil {
		p := peak.stop()
		if hwm, err := statusField(n.pid(), "VmHWM"); err == nil && hwm > p {
			p = hwm
		}
		res.add(s.peak, n.name, mib(p))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", n.name, err)
	}
	if s.perCall {
		res.add(s.metric, n.name, percentile(out.LatMs, 50))
	} else {
		// Wrong answers count too: they cost the node the same work.
		res.add(s.metric, n.name, float64(len(out.LatMs))/(out.WallMs/1000))
	}
	return nil
}

// peakSampler reads a process tree's RSS every 10 ms: the main process's
// VmHWM misses its children, and children's peaks are not summed by the kernel.
type peakSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	max  int64
}

func startPeakSampler(pid int) *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := treeRSS(pid); err == nil && v > p.max {
				p.max = v
			}
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) stop() int64 {
	close(p.done)
	p.wg.Wait()
	return p.max
}

func loadAverage() [3]float64 {
	var l [3]float64
	data, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		_, _ = fmt.Sscanf(string(data), "%f %f %f", &l[0], &l[1], &l[2])
	}
	return l
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
