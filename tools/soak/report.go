//go:build linux

package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

func quantile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func replayCommand(o options) string {
	cmd := fmt.Sprintf("go run ./tools/soak -seed %d -duration %s", o.seed, o.duration)
	if o.quick {
		cmd += " -quick"
	}
	return cmd
}

// printViolation is the report of a broken invariant: the seed, the fault
// sequence and the history that shows it.
func printViolation(w io.Writer, s *summary) {
	v := s.violation
	fmt.Fprintf(w, "\nSOAK FAILED: %s\n", v.What)
	fmt.Fprintf(w, "seed %d; replay with: %s\n", s.opts.seed, replayCommand(s.opts))
	fmt.Fprintf(w, "\nfault sequence (%d episodes):\n", len(s.episodes))
	for _, ep := range s.episodes {
		fmt.Fprintf(w, "  #%-3d %7.1fs–%7.1fs  %s\n", ep.n, ep.from.Seconds(), ep.to.Seconds(), strings.Join(ep.faults, " + "))
	}
	about := "the run"
	if v.Key != "" || v.Conn != "" {
		about = strings.TrimSpace("id " + v.Key + " connection " + v.Conn)
	}
	fmt.Fprintf(w, "\nhistory (lines about %s, connection ends, registrations, faults, and the last lines):\n", about)
	for _, e := range v.Lines {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if s.dir != "" {
		fmt.Fprintf(w, "\nthe daemon's log and files are kept in %s\n", s.dir)
	}
}

// printFigures is the table at the end of a run.
func printFigures(w io.Writer, s *summary) {
	mode := ""
	if s.opts.quick {
		mode = ", quick"
	}
	fmt.Fprintf(w, "\nvcpnode chaos soak: seed %d, %s of faults%s, %s/%s, %d CPUs, %s, run took %s\n",
		s.opts.seed, s.opts.duration, mode, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), s.started.UTC().Format("2006-01-02 15:04 UTC"), s.elapsed.Round(time.Second))
	fmt.Fprintf(w, "\n| fault | injected |\n|---|---|\n")
	var names []string
	for n := range s.injected {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range names {
		fmt.Fprintf(w, "| %s | %d |\n", n, s.injected[n])
		total += s.injected[n]
	}
	var skipped []string
	for n := range s.skipped {
		skipped = append(skipped, n)
	}
	sort.Strings(skipped)
	for _, n := range skipped {
		fmt.Fprintf(w, "| %s | skipped: %s |\n", n, s.skipped[n])
	}
	fmt.Fprintf(w, "| **all** (%d episodes of 1–3 at once) | %d |\n", len(s.episodes), total)

	t := s.t
	t.mu.Lock()
	failed := 0
	for _, n := range t.failed {
		failed += n
	}
	fmt.Fprintf(w, "\n| calls | count |\n|---|---|\n")
	fmt.Fprintf(w, "| made | %d |\n| answered (result checked) | %d |\n| failed with a reason | %d |\n", t.made, t.answered, failed)
	fmt.Fprintf(w, "| ended with their connection (the server fails these itself) | %d |\n", t.endedWith)
	fmt.Fprintf(w, "| cancelled, no result owed | %d |\n| **lost** | **%d** |\n", t.cancelled, t.lost)
	var reasons []string
	for r := range t.failed {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return t.failed[reasons[i]] > t.failed[reasons[j]] })
	for _, r := range reasons {
		fmt.Fprintf(w, "| failed: %s | %d |\n", strings.ReplaceAll(r, "|", "/"), t.failed[r])
	}
	var kinds []string
	for k := range t.byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, t.byKind[k]))
	}
	sort.Strings(kinds)
	t.mu.Unlock()
	fmt.Fprintf(w, "\ncall mix: %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(w, "async callbacks: %d accepted by the node, %d delivered in order, %d of them again on a later connection (written, not confirmed by a pong)\n",
		s.accepted, s.delivered, s.resent)
	fmt.Fprintf(w, "reconnects: %d; time to re-register once the path is usable p50 %s, p99 %s; longest unregistered %s\n",
		len(s.reregister), quantile(s.reregister, 0.5).Round(time.Millisecond), quantile(s.reregister, 0.99).Round(time.Millisecond),
		slices.Max(append([]time.Duration{0}, s.unreg...)).Round(time.Millisecond))
	fmt.Fprintf(w, "memory: baseline %.1f MiB, peak %.1f MiB (VmHWM), final %.1f MiB at rest\n", mib(s.baseline.RSS), mib(s.peakRSS), mib(s.final.RSS))
	fmt.Fprintf(w, "at rest: baseline %s\n         final    %s\n", s.baseline, s.final)
	if s.injected["memory-pressure"] > 0 && s.memV1 {
		fmt.Fprintf(w, "memory pressure: the limit was reached %d times; the kernel OOM-killed %d processes in the daemon's group\n", s.memHits, s.memKills)
	}
	fmt.Fprintf(w, "margins after each fault: %s\n", defaultMargins)
	if !s.nodeJS {
		fmt.Fprintln(w, "no Node.js: the direct plugin was left out")
	}
}
