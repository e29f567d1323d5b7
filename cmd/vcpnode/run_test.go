package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
)

// fakeNodeEnv makes the test binary act as vcpnode with a fake node (see
// TestMain): "quick" stops at the first signal, "hold" waits for Hurry.
const fakeNodeEnv = "VCPNODE_TEST_FAKE_NODE"

// asVCPNodeEnv makes the test binary act as vcpnode itself, real node and
// all, for tests that run it as a program (TestReadmeFirstRun).
const asVCPNodeEnv = "VCPNODE_TEST_AS_VCPNODE"

func TestMain(m *testing.M) {
	if os.Getenv(asVCPNodeEnv) != "" {
		os.Exit(execute(newApp(), os.Args[1:]))
	}
	if mode := os.Getenv(fakeNodeEnv); mode != "" {
		a := newApp()
		a.newNode = func(_ config.Config, log zerolog.Logger, _ ...node.Option) (nodeRunner, error) {
			f := newFakeNode()
			f.log, f.holdUntilHurried = log, mode == "hold"
			return f, nil
		}
		os.Exit(execute(a, os.Args[1:]))
	}
	// In-process commands read $STATE_DIRECTORY; as root they would read
	// /var/lib/vcpnode without it.
	state, err := os.MkdirTemp("", "vcpnodetest-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("STATE_DIRECTORY", state)
	code := m.Run()
	os.RemoveAll(state)
	removeBuilt()
	os.Exit(code)
}

// startRun runs `vcpnode run` in the background and returns its exit code channel.
func startRun(ta *testApp, args ...string) <-chan int {
	exit := make(chan int, 1)
	go func() { exit <- ta.run(append([]string{"run"}, args...)...) }()
	return exit
}

func waitExit(t *testing.T, exit <-chan int) int {
	t.Helper()
	select {
	case code := <-exit:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("vcpnode run did not exit")
		return -1
	}
}

func TestRunStopsGracefullyOnFirstSignal(t *testing.T) {
	ta := newTestApp(t)
	path := writeFile(t, "c.toml", "[log]\nformat = \"json\"\n", 0o600)
	exit := startRun(ta, "--config", path)
	waitClosed(t, ta.node.running, "the node to run")
	ta.sigs <- syscall.SIGTERM
	if code := waitExit(t, exit); code != exitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, ta.stderr)
	}
	log := ta.stderr.String()
	for _, want := range []string{`"message":"starting"`, `"signal":"terminated"`, "shutting down gracefully", "fake: draining"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	select {
	case <-ta.node.hurried:
		t.Error("one signal hurried the shutdown")
	default:
	}
}

func TestRunSecondSignalHurries(t *testing.T) {
	ta := newTestApp(t)
	ta.node.holdUntilHurried = true
	path := writeFile(t, "c.toml", "", 0o600)
	exit := startRun(ta, "--config", path, "--log-format", "json")
	waitClosed(t, ta.node.running, "the node to run")
	ta.sigs <- syscall.SIGINT
	ta.sigs <- syscall.SIGTERM
	waitClosed(t, ta.node.hurried, "Hurry")
	if code := waitExit(t, exit); code != exitOK {
		t.Fatalf("exit code %d; stderr:\n%s", code, ta.stderr)
	}
	if log := ta.stderr.String(); !strings.Contains(log, "cutting the shutdown grace period short") {
		t.Errorf("log does not mention the hurry:\n%s", log)
	}
}

func TestRunFailures(t *testing.T) {
	bad := writeFile(t, "bad.toml", "[node]\nqueue = -1\nmax_concurrent = 0\n", 0o600)
	good := writeFile(t, "good.toml", "", 0o600)
	tests := []struct {
		name   string
		args   []string
		runErr error
		want   []string
	}{
		{"invalid config", []string{"--config", bad}, nil, []string{
			"vcpnode: " + bad + ":2:1: node.queue: must be 0 or more",
			"vcpnode: " + bad + ":3:1: node.max_concurrent: must be at least 1",
		}},
		{"missing config", []string{"--config", bad + ".missing"}, nil, []string{"vcpnode: read config: open " + bad + ".missing"}},
		{"node fails", []string{"--config", good}, errors.New("boom"), []string{"vcpnode: node: boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := newTestApp(t)
			ta.node.runErr = tt.runErr
			if code := waitExit(t, startRun(ta, tt.args...)); code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			for _, w := range tt.want {
				if !strings.Contains(ta.stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, ta.stderr)
				}
			}
		})
	}
}

func TestServeRefusesAnUnaskedStop(t *testing.T) {
	ta := newTestApp(t)
	err := ta.serve(context.Background(), stoppingNode{}, zerolog.Nop(), ta.sigs)
	if !errors.Is(err, errStoppedUnasked) {
		t.Errorf("serve = %v, want errStoppedUnasked", err)
	}
}

type stoppingNode struct{}

func (stoppingNode) Run(context.Context) error { return nil }
func (stoppingNode) Hurry()                    {}

// TestRunWithTheRealNodeNeverShowsABadKey goes through node.New.
func TestRunWithTheRealNodeNeverShowsABadKey(t *testing.T) {
	const secret = "s3cr3t key/with?bad#chars"
	t.Setenv(config.EnvKey, secret) // run takes it out of the process environment
	ta := newTestApp(t)
	ta.env[config.EnvKey] = secret // and hands the app's copy to node.New
	ta.newNode = newApp().newNode
	path := writeFile(t, "c.toml", "", 0o600)
	if code := waitExit(t, startRun(ta, "--config", path)); code != exitError {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitError, ta.stderr)
	}
	out := ta.stdout.String() + ta.stderr.String()
	if !strings.Contains(out, "invalid hub key") {
		t.Errorf("output does not say the key is invalid:\n%s", out)
	}
	for _, part := range []string{secret, "s3cr3t", "bad#chars"} {
		if strings.Contains(out, part) {
			t.Errorf("output contains the key part %q:\n%s", part, out)
		}
	}
}

// TestRunHandlesRealSignals runs this test binary as vcpnode (with a fake
// node) and sends it real SIGTERM and SIGINT.
func TestRunHandlesRealSignals(t *testing.T) {
	for _, mode := range []string{"quick", "hold"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			path := writeFile(t, "c.toml", "[log]\nformat = \"json\"\n", 0o600)
			cmd := exec.CommandContext(ctx, os.Args[0], "run", "--config", path)
			cmd.Env = hermeticEnv(t, fakeNodeEnv+"="+mode)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := readLines(stderr)
			waitLine(t, lines, "fake: running")
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitLine(t, lines, "fake: draining")
			if mode == "hold" {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				waitLine(t, lines, "fake: hurried")
			}
			for range lines { // drain to EOF before Wait
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("vcpnode run exited with %v", err)
			}
		})
	}
}

// readLines sends r's lines on the returned channel and closes it at EOF.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

func waitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	var seen []string
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %q:\n%s", want, strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			if strings.Contains(line, want) {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %q:\n%s", want, strings.Join(seen, "\n"))
		}
	}
}

// watchedNode closes stopping when its Run's context ends.
type watchedNode struct{ running, stopping chan struct{} }

func (w watchedNode) Run(ctx context.Context) error {
	close(w.running)
	<-ctx.Done()
	close(w.stopping)
	return nil
}
func (watchedNode) Hurry() {}

// A slow SIGHUP reload does not hold up SIGTERM: the reload runs off the
// signal loop.
func TestSIGTERMIsNotDelayedByAReload(t *testing.T) {
	ta := newTestApp(t)
	n := watchedNode{running: make(chan struct{}), stopping: make(chan struct{})}
	hups := make(chan os.Signal, 1)
	reloading, finish := make(chan struct{}), make(chan struct{})
	reload := func() { close(reloading); <-finish }
	served := make(chan error, 1)
	go func() { served <- ta.serveWith(context.Background(), n, zerolog.Nop(), ta.sigs, hups, reload) }()
	waitClosed(t, n.running, "the node to run")
	hups <- syscall.SIGHUP
	waitClosed(t, reloading, "the reload to start")
	ta.sigs <- syscall.SIGTERM
	waitClosed(t, n.stopping, "the node to be stopped while the reload is still running")
	close(finish)
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the reload finished")
	}
}
