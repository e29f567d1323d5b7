package main

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// compareBinaries runs each binary in turn, rounds times (A, B, A, B, …, so
// that a change in the machine's load falls on all of them alike), and
// prints each run and then the median, lowest and highest of each figure.
func compareBinaries(bins []string, rounds int, idle time.Duration) error {
	runs := make([][]binaryRun, len(bins))
	for round := range rounds {
		for i, bin := range bins {
			r, err := runBinary(bin, idle, false)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, bin, err)
			}
			fmt.Printf("round %d  %-28s registered %4d ms  %s\n", round+1, bin, r.registered.Milliseconds(), r.status)
			runs[i] = append(runs[i], r)
		}
	}
	fmt.Printf("\n%d rounds, %s idle; median (lowest-highest)\n", rounds, idle)
	fmt.Printf("%-28s %9s  %-22s %-22s %-22s %-22s\n", "binary", "size MiB", "VmRSS MiB", "anon MiB", "file MiB", "start→registered ms")
	for i, bin := range bins {
		size := "?"
		if fi, err := os.Stat(bin); err == nil {
			size = fmt.Sprintf("%.2f", mib(fi.Size()))
		}
		fmt.Printf("%-28s %9s  %-22s %-22s %-22s %-22s\n", bin, size,
			spread(runs[i], func(r binaryRun) float64 { return mib(r.status.RSS) }, "%.1f"),
			spread(runs[i], func(r binaryRun) float64 { return mib(r.status.RSSAnon) }, "%.1f"),
			spread(runs[i], func(r binaryRun) float64 { return mib(r.status.RSSFile) }, "%.1f"),
			spread(runs[i], func(r binaryRun) float64 { return float64(r.registered.Milliseconds()) }, "%.0f"))
	}
	return nil
}

// spread formats the median, lowest and highest of one figure over runs.
func spread(runs []binaryRun, figure func(binaryRun) float64, format string) string {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = figure(r)
	}
	slices.Sort(v)
	median := v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", median, v[0], v[len(v)-1])
}
