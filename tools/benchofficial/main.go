// Command benchofficial measures vcpnode side by side with the official
// Node.js node (lioensky/VCPDistributedServer): both connect to one VCP main
// server, host the same plugins and serve the same files, and the same calls
// are timed against each in interleaved rounds. It prints a Markdown table of
// the medians over the rounds and their ratios. Linux only (it reads /proc).
//
// It is a measurement, not a test: nothing in the repository's tests or CI
// runs it. scripts/bench-vs-official.sh builds the release binary and runs it
// in a network namespace of its own, so that only loopback is reachable.
//
//	go run ./tools/benchofficial -official ~/VCPDistributedServer \
//	    -toolbox ~/VCPToolBox -vcpnode /tmp/vcpnode -rounds 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	official string // checkout of VCPDistributedServer, npm install done
	toolbox  string // checkout of VCPToolBox, for its WebSocketServer.js; empty: the minimal server
	vcpnode  string // the vcpnode binary
	python   string // the python3 both nodes run
	rounds   int
	pyGap    time.Duration // between Python and Node.js plugin calls: a warm pool refills
	idle     time.Duration // both nodes idle before each round's memory reading
	sandbox  string        // vcpnode's [sandbox] profile; empty: the shipped default
	only     string        // run only the scenarios whose row names contain this
	quick    bool          // fewer calls per scenario, to try the harness
	keep     bool          // keep the work directory
}

func main() {
	var o options
	flag.StringVar(&o.official, "official", "", "checkout of lioensky/VCPDistributedServer with node_modules (npm install)")
	flag.StringVar(&o.toolbox, "toolbox", "", "checkout of lioensky/VCPToolBox: the server is its WebSocketServer.js (empty: a minimal server)")
	flag.StringVar(&o.vcpnode, "vcpnode", "", "the vcpnode binary to measure")
	flag.StringVar(&o.python, "python", defaultPython(), "the python3 both nodes run for the Python plugins")
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds")
	flag.DurationVar(&o.pyGap, "pygap", 500*time.Millisecond, "pause between sequential Python and Node.js plugin calls (both nodes), so vcpnode's warm pool has refilled")
	flag.DurationVar(&o.idle, "idle", 3*time.Second, "idle time before each round's memory reading")
	flag.StringVar(&o.sandbox, "sandbox", "", "vcpnode's [sandbox] profile for the plugins (e.g. none; empty: the shipped default)")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose row contains this text (e.g. \"1 KiB\", to profile one)")
	flag.BoolVar(&o.quick, "quick", false, "fewer calls per scenario (to try the harness, not to quote)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (configs, logs) and print its path")
	flag.Parse()
	if o.official == "" || o.vcpnode == "" {
		fmt.Fprintln(os.Stderr, "benchofficial: -official and -vcpnode are required")
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchofficial:", err)
		os.Exit(1)
	}
}

// defaultPython prefers the system interpreter over version-manager shims,
// which are shell scripts and would add their own start-up to every call.
func defaultPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "python3"
}

func run(ctx context.Context, o options) error {
	for _, p := range []*string{&o.official, &o.toolbox, &o.vcpnode} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	dir, err := os.MkdirTemp("", "benchofficial-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "work directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	w, err := prepare(dir, o)
	if err != nil {
		return err
	}

	hub, err := startHub(ctx, w, o)
	if err != nil {
		return err
	}
	defer hub.stop()

	nodes := []*nodeProc{}
	defer func() {
		for _, n := range nodes {
			n.stop()
		}
	}()
	for _, start := range []func(context.Context, workdir, options, int) (*nodeProc, error){startVcpnode, startOfficial} {
		n, err := start(ctx, w, o, hub.hubPort)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		if err := hub.waitRegistered(ctx, n, benchTools, 60*time.Second); err != nil {
			return fmt.Errorf("%s: %w\n%s", n.name, err, n.logTail())
		}
		fmt.Fprintf(os.Stderr, "%s registered %v (pid %d)\n", n.name, benchTools, n.pid())
	}

	res, err := measure(ctx, hub, nodes, w, o)
	if err != nil {
		for _, n := range nodes {
			err = fmt.Errorf("%w\n%s log:\n%s", err, n.name, n.logTail())
		}
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	fmt.Print(res.markdown())
	return nil
}
