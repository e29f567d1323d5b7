//go:build linux

// Command soak is vcpnode's chaos soak: it runs the real daemon with real
// plugins (sync, async, static, direct when Node.js is there, an MCP stdio
// server) against the fake hub, through a fault-injecting TCP proxy
// (toxiproxy, as a library), makes a steady mix of calls, and injects
// faults drawn from the seed. It checks invariants from the histories of
// frames, never from timings, and stops at the first violation with the
// seed, the fault sequence and the history that shows it.
//
//	go run ./tools/soak                        # 10 minutes, random seed
//	go run ./tools/soak -quick -seed 1         # about a minute
//	go run ./tools/soak -quick -seed 1,2 -duration 12s   # what CI runs
//	go run ./tools/soak -seed 42 -duration 10m # replay a seed
//
// Everything runs on 127.0.0.1 and in a temporary directory. As root the
// daemon also gets a private mount namespace (a small tmpfs for its state
// directory, filled by the disk-full fault) and a memory cgroup of its own
// (v2, or a v1 memory hierarchy) for memory pressure; otherwise those faults
// are skipped and said so.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if helperMode() {
		return
	}
	os.Exit(soakMain())
}

// soakMain runs the soak for each seed and returns the exit code: 1 for a
// broken invariant, 2 when the soak itself could not run.
func soakMain() int {
	o := options{privileged: true, callTimeout: 15 * time.Second, slack: 30 * time.Second, settle: 60 * time.Second, out: os.Stdout}
	seedList := flag.String("seed", "", "seed of the fault sequence and the call mix, or a comma-separated list run at the same time (empty: pick one and print it)")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long faults are injected (-quick: 45s unless given)")
	flag.BoolVar(&o.quick, "quick", false, "short episodes, about a minute in all")
	flag.StringVar(&o.binary, "binary", "", "a built vcpnode to soak instead of building this module's")
	faults := flag.String("faults", "", "comma-separated fault kinds to use (default all)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (it is always kept after a violation)")
	flag.Parse()
	seeds, err := parseSeeds(*seedList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	durationSet := false
	flag.Visit(func(f *flag.Flag) { durationSet = durationSet || f.Name == "duration" })
	if o.quick && !durationSet {
		o.duration = 45 * time.Second
	}
	if *faults != "" {
		o.only = map[string]bool{}
		for _, f := range strings.Split(*faults, ",") {
			o.only[strings.TrimSpace(f)] = true
		}
	}
	if o.binary == "" {
		dir, err := os.MkdirTemp("", "vcpnode-soak-build-")
		if err == nil {
			defer os.RemoveAll(dir)
			o.binary, err = buildVCPNode(ctx, dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			return 2
		}
	}
	// Seeds of a list run at the same time, each with its own daemon, hub
	// and proxy; their reports are printed one after the other, in order.
	outs := make([]bytes.Buffer, len(seeds))
	codes := make([]int, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		o := o
		o.seed = seed
		o.out = &outs[i]
		if len(seeds) == 1 {
			o.out = os.Stdout // live, for a long run
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = soakSeed(ctx, o)
		}()
	}
	wg.Wait()
	code := 0
	for i := range seeds {
		if len(seeds) > 1 {
			_, _ = outs[i].WriteTo(os.Stdout)
		}
		code = max(code, codes[i])
	}
	return code
}

// soakSeed runs the soak for one seed, writing its report to o.out, and
// returns its exit code.
func soakSeed(ctx context.Context, o options) int {
	fmt.Fprintf(o.out, "soak: seed %d, %s of faults (replay: %s)\n", o.seed, o.duration, replayCommand(o))
	s, err := run(ctx, o)
	if err != nil {
		fmt.Fprintf(o.out, "soak: seed %d: %v\n", o.seed, err)
		return 2
	}
	printFigures(o.out, s)
	if s.violation != nil {
		printViolation(o.out, s)
		return 1
	}
	fmt.Fprintf(o.out, "\nseed %d: no invariant broken\n\n", o.seed)
	return 0
}

func parseSeeds(list string) ([]uint64, error) {
	if strings.TrimSpace(list) == "" {
		return []uint64{uint64(time.Now().UnixNano()%1_000_000) + 1}, nil
	}
	var seeds []uint64
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("-seed %q: want positive whole numbers, comma-separated", list)
		}
		seeds = append(seeds, n)
	}
	return seeds, nil
}
