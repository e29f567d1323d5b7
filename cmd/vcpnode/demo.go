package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

const (
	// demoTimeout bounds the whole demo so that it can never hang.
	demoTimeout = 30 * time.Second
	// demoStopWait bounds each wait while shutting down (Run, then the socket).
	demoStopWait = 5 * time.Second
	demoNodeName = "demo-node"
	demoFileName = "hello.txt"
	demoFileText = "Hello from the vcpnode demo.\nThis file sits in a temporary directory, the node's only file root.\n"
	demoEchoText = "hello from the vcpnode demo"
	// clipRunes is how much of a text, an argument list or an error a line shows.
	clipRunes = 100
)

// demoSlack multiplies the demo's time limits (the whole demo, the
// example plugins' timeouts, the wait for the callback). Tests raise it: on
// a loaded machine starting Python alone can take seconds.
var demoSlack = 1

// demoKey makes the key the demo's hub and node share. Tests replace it to
// check that the key never reaches the output.
var demoKey = rand.Text

var (
	errDemoTimedOut    = fmt.Errorf("the demo took longer than %s", demoTimeout)
	errDemoInterrupted = errors.New("demo interrupted")
)

func newDemoCmd(a *app) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a node against a fake VCP server inside this process and show what they exchange",
		Long: "demo needs no VCP server and no config. It starts a fake main server on 127.0.0.1\n" +
			"with a random key, connects a node to it with the example tools Echo and NodeInfo\n" +
			"and a temporary directory as its only file root, sends a few execute_tool calls\n" +
			"(some meant to fail), prints every frame and result, then shuts down. It exits 0\n" +
			"when every call turned out as expected. Nothing leaves the loopback interface.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// As in run: a signal during start-up still ends the demo cleanly.
			sigs, stop := a.signals()
			defer stop()
			level := "warn" // so that stdout is the frames, not the node's log
			if verbose {
				level = "info"
			}
			log, err := a.logger(config.LogConfig{Level: level, Format: "auto"})
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runDemo(ctx, a.stdout, log, sigs)
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also show the node's and the fake server's info log on stderr")
	return cmd
}

// demoCall is one execute_tool the demo sends and what must come of it.
type demoCall struct {
	tool     string
	args     map[string]any
	describe string
	// expectError, when set, means the call must fail with an error that contains it.
	expectError string
	// check, if set, looks further into a successful result and says what it saw.
	check func(result json.RawMessage) (string, error)
}

// demoFile is the file the demo serves from its temporary root.
type demoFile struct {
	path, url string
	data      []byte
}

// demoCalls is the script; adding a call is adding a line.
func demoCalls(f demoFile) []demoCall {
	serve := demoCall{tool: files.ToolName, args: map[string]any{"fileUrl": f.url}, describe: "the server pulls a file from the node's file root", check: f.sameBytes}
	outside := demoCall{tool: files.ToolName, args: map[string]any{"fileUrl": "file:///etc/passwd"}, describe: "a file outside the root is refused", expectError: "outside the directories this node serves"}
	if !files.ServingSupported {
		// Windows: no file is served at all, and the demo shows that answer.
		serve.describe, serve.check, serve.expectError = "file serving is refused on this system", nil, "file serving is not supported"
		outside.expectError = "file serving is not supported"
	}
	return []demoCall{
		{tool: "Echo", args: map[string]any{"message": demoEchoText}, describe: "the node answers with the text it was sent", check: hasText(demoEchoText)},
		{tool: "NodeInfo", describe: "the node describes the machine it runs on", check: hasText("node process: pid")},
		serve,
		outside,
		{tool: "NoSuchTool", describe: "a tool this node does not have", expectError: "unknown tool"},
	}
}

// runDemo is the demo from start to summary. It returns nil only when every
// step turned out as expected.
func runDemo(parent context.Context, stdout io.Writer, log zerolog.Logger, sigs <-chan os.Signal) error {
	start := time.Now()
	out := &demoPrinter{w: stdout}
	key := demoKey()
	keyNote := "random, not shown"
	cfg := config.Default()
	cfg.Hub.Key, cfg.Hub.Name = key, demoNodeName
	cfg.Node.ExposedTools = []string{"Echo", "NodeInfo"}

	root, err := os.MkdirTemp("", "vcpnode-demo-")
	if err != nil {
		return fmt.Errorf("make the demo's file root: %w", err)
	}
	defer os.RemoveAll(root)
	file := demoFile{path: filepath.Join(root, demoFileName), data: []byte(demoFileText)}
	file.url = (&url.URL{Scheme: "file", Path: filepath.ToSlash(file.path)}).String()
	if err := os.WriteFile(file.path, file.data, 0o600); err != nil {
		return fmt.Errorf("write the demo's file: %w", err)
	}
	cfg.Files.Roots = []string{root}
	// The demo's state is its own: a real daemon's tool switches and
	// remembered approvals (in /var/lib/vcpnode for root) must not apply.
	state, err := os.MkdirTemp("", "vcpnode-demo-state-")
	if err != nil {
		return fmt.Errorf("make the demo's state directory: %w", err)
	}
	defer os.RemoveAll(state)
	cfg.Plugins.StateDir = state
	plugins := setupDemoPlugins(&cfg) // demo_plugins.go

	hub, err := demohub.Start(demohub.Options{
		Key:     key,
		OnFrame: func(f demohub.Frame) { out.line(describeFrame(f)) },
		Logf:    func(format string, args ...any) { log.Info().Msgf(format, args...) },
	})
	if err != nil {
		return err
	}
	defer hub.Close()
	cfg.Hub.URL = hub.BaseURL()

	// The demo's plugins get only stdin, stdout and stderr, as the daemon's do.
	keepInheritedLogged(log)
	// The demo's key is its own: a $VCPNODE_KEY meant for a real server is not consulted.
	noEnv := func(string) string { return "" }
	n, err := node.New(cfg, log, node.WithGetenv(noEnv),
		node.WithTools(toolhost.NewEchoTool(), toolhost.NewSystemInfoTool(start)))
	if err != nil {
		return err
	}
	out.printf("vcpnode demo: a node and a fake VCP server in this process, on loopback only\n")
	out.printf("  server  %s\n  key     %s\n  files   %s (only root), holding %s\n", hub.WSURL(), keyNote, root, demoFileName)
	plugins.describe(out)

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, time.Duration(demoSlack)*demoTimeout, errDemoTimedOut)
	defer cancelTimeout()
	stopSignals := watchDemoSignals(sigs, log, cancel, n.Hurry)
	defer stopSignals()

	nodeCtx, stopNode := context.WithCancel(ctx)
	defer stopNode()
	out.printf("\nconnecting\n") // before Run: the first frames may come at once
	runDone := make(chan error, 1)
	go func() { runDone <- n.Run(nodeCtx) }()

	calls := append(demoCalls(file), plugins.calls()...)
	d := &demo{out: out, planned: len(calls), tools: plugins.tools()}
	conn := d.connect(ctx, hub)
	if conn != nil {
		d.callAll(ctx, conn, calls)
		plugins.awaitCallback(ctx, d, conn, n.PluginProcesses)
	}
	out.printf("\nshutting down\n")
	stopNode()
	d.shutdown(runDone, n.Hurry, conn)
	hub.Close()
	return d.finish(context.Cause(ctx))
}

// watchDemoSignals cancels the demo at the first signal and hurries the
// node's shutdown at the next ones, like `run`. Signals that arrived while
// the demo was being set up are acted on before it returns, so the node is
// never started for a demo already interrupted (whatever the scheduler does
// with the watcher). The returned function stops watching and waits for the
// watcher.
func watchDemoSignals(sigs <-chan os.Signal, log zerolog.Logger, cancel context.CancelCauseFunc, hurry func()) func() {
	received := 0
	onSignal := func(sig os.Signal) {
		if received++; received == 1 {
			log.Info().Str("signal", sig.String()).Msg("stopping the demo; send the signal again to stop without waiting")
			cancel(fmt.Errorf("%w by %s", errDemoInterrupted, sig))
			return
		}
		hurry()
	}
	for pending := true; pending; {
		select {
		case sig := <-sigs:
			onSignal(sig)
		default:
			pending = false
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case sig := <-sigs:
				onSignal(sig)
			case <-done:
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// demo tracks how the steps went.
type demo struct {
	out                 *demoPrinter
	tools               []string // the names the node must register, sorted
	planned, sent       int
	succeeded, failedOK int
	problems            []string
}

func (d *demo) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.problems = append(d.problems, msg)
	d.out.printf("  FAIL: %s\n", msg)
}

// failed records a step that could not finish; once the demo is stopped
// (signal, timeout) the reason shown is that, not "context canceled".
func (d *demo) failed(ctx context.Context, what string, err error) {
	if cause := context.Cause(ctx); cause != nil {
		err = cause
	}
	d.problem("%s: %v", what, err)
}

// connect waits for the node's connection and its registration; nil means
// the demo cannot go on.
func (d *demo) connect(ctx context.Context, hub *demohub.Hub) *demohub.Conn {
	// Checked first: Accept prefers a queued connection to a done ctx.
	if err := ctx.Err(); err != nil {
		d.failed(ctx, "the node did not connect", err)
		return nil
	}
	conn, err := hub.Accept(ctx)
	if err != nil {
		d.failed(ctx, "the node did not connect", err)
		return nil
	}
	m, err := conn.WaitType(ctx, wsproto.TypeRegisterTools)
	if err != nil {
		d.failed(ctx, "the node did not register its tools", err)
		return nil
	}
	if got, want := registeredNames(m.(wsproto.RegisterTools)), d.tools; !slices.Equal(got, want) {
		d.problem("the node registered %v, want %v", got, want)
	}
	if _, err := conn.WaitType(ctx, wsproto.TypeReportIP); err != nil {
		d.failed(ctx, "the node did not report its addresses", err)
		return nil
	}
	return conn
}

// callAll sends the calls one by one and judges each result.
func (d *demo) callAll(ctx context.Context, conn *demohub.Conn, calls []demoCall) {
	for i, c := range calls {
		d.sent++
		expect := "expect success"
		if c.expectError != "" {
			expect = "expect an error"
		}
		d.out.printf("\ncall %d of %d: %s, %s (%s)\n", i+1, len(calls), c.tool, c.describe, expect)
		res, err := conn.Call(ctx, c.tool, c.args)
		if err != nil {
			d.failed(ctx, fmt.Sprintf("call %d (%s): no result", i+1, c.tool), err)
			return
		}
		v := judge(c, res)
		switch {
		case !v.ok:
			d.problem("call %d (%s): %s", i+1, c.tool, v.detail)
		case v.failed:
			d.failedOK++
			d.out.printf("  ok: %s\n", v.detail)
		default:
			d.succeeded++
			d.out.printf("  ok: %s\n", v.detail)
		}
	}
}

// shutdown waits for Run (hurrying it if it is slow) and for the node to
// close its socket.
func (d *demo) shutdown(runDone <-chan error, hurry func(), conn *demohub.Conn) {
	wait := time.NewTimer(demoStopWait)
	defer wait.Stop()
	select {
	case err := <-runDone:
		d.stopped(err)
	case <-wait.C:
		hurry()
		wait.Reset(demoStopWait)
		select {
		case err := <-runDone:
			d.stopped(err)
		case <-wait.C:
			d.problem("the node did not stop within %s", 2*demoStopWait)
			return
		}
	}
	if conn == nil {
		return
	}
	wait.Reset(demoStopWait)
	select {
	case <-conn.Done():
		d.out.line(fmt.Sprintf("  hub ← node  %-14s  %v", "(closed)", conn.Err()))
	case <-wait.C:
		d.problem("the node stopped but its connection stayed open")
	}
}

func (d *demo) stopped(err error) {
	if err != nil {
		d.problem("the node stopped with an error: %v", err)
		return
	}
	d.out.printf("  the node stopped cleanly\n")
}

// finish prints the summary and returns what went wrong, if anything.
func (d *demo) finish(cause error) error {
	summary := fmt.Sprintf("%d calls: %d succeeded, %d failed as expected", d.planned, d.succeeded, d.failedOK)
	if wrong := d.sent - d.succeeded - d.failedOK; wrong > 0 {
		summary += fmt.Sprintf(", %d did not go as expected", wrong)
	}
	if unsent := d.planned - d.sent; unsent > 0 {
		summary += fmt.Sprintf(", %d not sent", unsent)
	}
	d.out.printf("\n%s\n", summary)
	switch {
	case errors.Is(cause, errDemoInterrupted):
		return cause // the lines above already say where it stopped
	case len(d.problems) > 0:
		return fmt.Errorf("the demo did not go as expected: %s", strings.Join(d.problems, "; "))
	}
	return nil
}

// verdict is how one call turned out against the table.
type verdict struct {
	ok     bool   // as expected
	failed bool   // the node answered with an error result
	detail string // what to print
}

func judge(c demoCall, res wsproto.ToolResult) verdict {
	switch res.Status {
	case wsproto.StatusSuccess:
		if c.expectError != "" {
			return verdict{detail: fmt.Sprintf("succeeded, but an error containing %q was expected", c.expectError)}
		}
		if c.check == nil {
			return verdict{ok: true, detail: "succeeded as expected"}
		}
		seen, err := c.check(res.Result)
		if err != nil {
			return verdict{detail: "succeeded, but " + err.Error()}
		}
		return verdict{ok: true, detail: "succeeded as expected: " + seen}
	case wsproto.StatusError:
		switch {
		case c.expectError == "":
			return verdict{failed: true, detail: "failed: " + clip(res.Error)}
		case !strings.Contains(res.Error, c.expectError):
			return verdict{failed: true, detail: fmt.Sprintf("failed with %q, but an error containing %q was expected", clip(res.Error), c.expectError)}
		}
		return verdict{ok: true, failed: true, detail: "failed as expected: " + clip(res.Error)}
	}
	return verdict{detail: fmt.Sprintf("answered with status %q, which is neither success nor error", res.Status)}
}

// hasText checks that the result's first text part contains want.
func hasText(want string) func(json.RawMessage) (string, error) {
	return func(result json.RawMessage) (string, error) {
		var r toolhost.ContentResult
		if err := json.Unmarshal(result, &r); err != nil || len(r.Content) == 0 {
			return "", fmt.Errorf("the result has no content parts: %s", clip(string(result)))
		}
		if !strings.Contains(r.Content[0].Text, want) {
			return "", fmt.Errorf("its text lacks %q", want)
		}
		return fmt.Sprintf("the text contains %q", want), nil
	}
}

// sameBytes checks a file result against the file on disk.
func (f demoFile) sameBytes(result json.RawMessage) (string, error) {
	var r struct {
		Status   string `json:"status"`
		FileData string `json:"fileData"`
		MimeType string `json:"mimeType"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", fmt.Errorf("the result is not a file object: %w", err)
	}
	data, err := base64.StdEncoding.DecodeString(r.FileData)
	switch {
	case r.Status != wsproto.StatusSuccess:
		return "", fmt.Errorf("its inner status is %q, not %q", r.Status, wsproto.StatusSuccess)
	case err != nil:
		return "", fmt.Errorf("fileData is not base64: %w", err)
	case !bytes.Equal(data, f.data):
		return "", fmt.Errorf("fileData decodes to %d bytes that differ from the %d of %s", len(data), len(f.data), f.path)
	}
	return fmt.Sprintf("%d bytes, %s; decoding the base64 gives the file's exact bytes", len(data), r.MimeType), nil
}
