//go:build linux

// Command soak is vcpnode's chaos soak: it runs the real daemon with real
// plugins (sync, async, static, direct when Node.js is there, an MCP stdio
// server) against the fake hub, through a fault-injecting TCP proxy
// (toxiproxy, as a library), makes a steady mix of calls, and injects
// faults drawn from the seed. It checks invariants from the histories of
// frames, never from timings, and stops at the first violation with the
// seed, the fault sequence and the history that shows it.
//
//	go run ./internal/soak                        # 10 minutes, random seed
//	go run ./internal/soak -quick -seed 1         # about a minute
//	go run ./internal/soak -seed 42 -duration 10m # replay a seed
//
// Everything runs on 127.0.0.1 and in a temporary directory. As root the
// daemon also gets a private mount namespace (a small tmpfs for its state
// directory, filled by the disk-full fault) and, on cgroup v2, a cgroup of
// its own for memory pressure; otherwise those faults are skipped and said so.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if helperMode() {
		return
	}
	o := options{privileged: true, callTimeout: 15 * time.Second, slack: 30 * time.Second, settle: 60 * time.Second, out: os.Stdout}
	seed := flag.Uint64("seed", 0, "seed of the fault sequence and the call mix (0: pick one and print it)")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long faults are injected (-quick: 45s unless given)")
	flag.BoolVar(&o.quick, "quick", false, "short episodes, about a minute in all")
	flag.StringVar(&o.binary, "binary", "", "a built vcpnode to soak instead of building this module's")
	faults := flag.String("faults", "", "comma-separated fault kinds to use (default all)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (it is always kept after a violation)")
	flag.Parse()
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano()%1_000_000) + 1
	}
	o.seed = *seed
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("soak: seed %d, %s of faults (replay: %s)\n", o.seed, o.duration, replayCommand(o))
	s, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	printFigures(os.Stdout, s)
	if s.violation != nil {
		printViolation(os.Stdout, s)
		os.Exit(1)
	}
	fmt.Println("\nno invariant broken")
}
