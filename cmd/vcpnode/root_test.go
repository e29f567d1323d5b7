package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/node"
)

// testApp is an app wired to buffers, a fake environment, a signal channel
// the test controls, and (unless replaced) a fake node.
type testApp struct {
	*app
	stdout, stderr *testlog.Buffer
	env            map[string]string
	sigs           chan os.Signal
	node           *fakeNode
}

func newTestApp(t *testing.T) *testApp {
	t.Helper()
	ta := &testApp{stdout: &testlog.Buffer{}, stderr: &testlog.Buffer{}, env: map[string]string{"STATE_DIRECTORY": t.TempDir()}, sigs: make(chan os.Signal, 4), node: newFakeNode()}
	ta.app = &app{
		stdout: ta.stdout,
		stderr: ta.stderr,
		getenv: func(k string) string { return ta.env[k] },
		newNode: func(cfg config.Config, log zerolog.Logger, _ ...node.Option) (nodeRunner, error) {
			ta.node.log = log
			return ta.node, nil
		},
		signals: func() (<-chan os.Signal, func()) { return ta.sigs, func() {} },
		// Never the real system service's socket, which may exist here.
		systemSocket: filepath.Join(t.TempDir(), "system", "vcpnode.sock"),
	}
	return ta
}

// run executes args and returns the exit code.
func (ta *testApp) run(args ...string) int { return execute(ta.app, args) }

// fakeNode stands in for *node.Node: Run blocks until its context ends,
// then, if holdUntilHurried, until Hurry is called.
type fakeNode struct {
	log              zerolog.Logger
	running, hurried chan struct{}
	hurryOnce        sync.Once
	holdUntilHurried bool
	runErr           error
}

func newFakeNode() *fakeNode {
	return &fakeNode{running: make(chan struct{}), hurried: make(chan struct{})}
}

func (f *fakeNode) Run(ctx context.Context) error {
	if f.runErr != nil {
		return f.runErr
	}
	f.log.Info().Msg("fake: running")
	close(f.running)
	<-ctx.Done()
	f.log.Info().Msg("fake: draining")
	if f.holdUntilHurried {
		<-f.hurried
		f.log.Info().Msg("fake: hurried")
	}
	return nil
}

func (f *fakeNode) Hurry() { f.hurryOnce.Do(func() { close(f.hurried) }) }

// writeFile writes content to name in a fresh temp dir and returns its path.
func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // umask may have narrowed it
		t.Fatal(err)
	}
	return path
}

// waitClosed fails the test if ch is not closed within a generous deadline.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	good := writeFile(t, "good.toml", "", 0o600)
	tests := []struct {
		args []string
		want string
		help string // the command whose help the hint names
	}{
		{nil, `"vcpnode" needs a command`, "vcpnode"},
		{[]string{"bogus"}, `unknown command "bogus" for "vcpnode"`, "vcpnode"},
		{[]string{"rnu"}, `(did you mean "run"?)`, "vcpnode"},
		{[]string{"run", "extra"}, `"vcpnode run" takes no arguments`, "vcpnode run"},
		{[]string{"run", "--bogus"}, "unknown flag: --bogus", "vcpnode run"},
		{[]string{"approve"}, `"vcpnode approve" takes one approval ID (vcpnode approvals lists them), got 0 arguments`, "vcpnode approve"},
		{[]string{"approvals", "forget", "a", "b"}, `"vcpnode approvals forget" takes one rule (vcpnode approvals rules lists them), got 2 arguments`, "vcpnode approvals forget"},
		{[]string{"tools", "expose", "Echo"}, `"vcpnode tools expose" takes a tool name and on or off, got 1 argument`, "vcpnode tools expose"},
		{[]string{"tools", "timeout", "Echo", "2m", "3m"}, `"vcpnode tools timeout" takes a tool name and a timeout ("45s", "2m" or "default"), got 3 arguments`, "vcpnode tools timeout"},
		{[]string{"run"}, "no config file: pass --config FILE, set VCPNODE_CONFIG, or write one with vcpnode init", "vcpnode run"},
		{[]string{"config"}, `"vcpnode config" needs a command`, "vcpnode config"},
		{[]string{"config", "chek"}, `(did you mean "check"?)`, "vcpnode config"},
		{[]string{"config", "check"}, "no config file", "vcpnode config check"},
		{[]string{"version", "--json=maybe"}, "invalid argument", "vcpnode version"},
		{[]string{"--log-level", "loud", "run", "--config", good}, `--log-level "loud" is not one of debug, info, warn, error`, "vcpnode run"},
		{[]string{"run", "--log-format", "xml", "--config", good}, `--log-format "xml" is not one of auto, console, json`, "vcpnode run"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			ta := newTestApp(t)
			if code := ta.run(tt.args...); code != exitUsage {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitUsage, ta.stderr)
			}
			stderr := ta.stderr.String()
			if !strings.Contains(stderr, "vcpnode: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want \"vcpnode: …%s…\"", stderr, tt.want)
			}
			if !strings.Contains(stderr, "Run '"+tt.help+" --help' for usage.") {
				t.Errorf("stderr has no usage hint: %q", stderr)
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"config", "check", "-h"}} {
		ta := newTestApp(t)
		if code := ta.run(args...); code != exitOK {
			t.Errorf("%v: exit code %d, stderr %q", args, code, ta.stderr)
		}
		if !strings.Contains(ta.stdout.String(), "Usage:") {
			t.Errorf("%v: no usage on stdout: %q", args, ta.stdout)
		}
	}
}

func TestReportPrefixesEveryLine(t *testing.T) {
	var buf bytes.Buffer
	code := report(&buf, nil, errors.New("first\nsecond ws://h/vcp-distributed-server/VCP_Key=s3cr3t"))
	want := "vcpnode: first\nvcpnode: second ws://h/vcp-distributed-server/VCP_Key=REDACTED\n"
	if code != exitError || buf.String() != want {
		t.Errorf("report = %d, %q; want 1, %q", code, buf.String(), want)
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	path := writeFile(t, "env.toml", "[log]\nlevel = \"debug\"\n", 0o600)
	ta := newTestApp(t)
	ta.env[envConfig] = path
	ta.env[config.EnvKey] = "a-key"
	if code := ta.run("config", "check"); code != exitOK {
		t.Fatalf("exit %d; stdout %q stderr %q", code, ta.stdout, ta.stderr)
	}
}
