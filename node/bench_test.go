package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// BenchmarkRoundTrip measures execute_tool → tool_result through a real
// loopback WebSocket: the fake hub encodes and writes the call, the node
// reads, decodes, dispatches to an in-process tool, encodes and writes the
// result, and the hub reads and decodes it. Hub and node share the process,
// so ns/op and allocs/op cover both ends of the wire.
//
// sequential has one call outstanding at a time, so ns/op is the latency of
// one round trip. inflight64 keeps 64 calls outstanding (64 callers, each
// starting its next call when the last one is answered) against a node
// allowed to run 64 at once, so ns/op is the inverse of throughput.
// The _infolog variants log the dispatcher's one info line per call as the
// daemon does (JSON with a timestamp, through the key-redacting writer);
// the others log nothing.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name     string
		inflight int
		infoLog  bool
	}{
		{"sequential", 1, false},
		{"inflight64", 64, false},
		{"sequential_infolog", 1, true},
		{"inflight64_infolog", 64, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			log := zerolog.Nop()
			if bc.infoLog {
				log = zerolog.New(benchRedactingDiscard{}).Level(zerolog.InfoLevel).With().Timestamp().Logger()
			}
			conn := startBenchNode(b, log, benchToolName, func(cfg *config.Config) {
				cfg.Node.ExposedTools = []string{benchToolName}
			}, WithTools(benchEchoTool{}))
			if bc.inflight == 1 {
				benchSequential(b, conn, benchToolName)
			} else {
				benchInflight(b, conn, benchToolName, bc.inflight)
			}
		})
	}
}

func benchSequential(b *testing.B, conn *demohub.Conn, tool string) {
	benchRun(b, 1, func(ctx context.Context) error { return benchCall(ctx, conn, tool) })
}

// benchInflight spreads b.N calls over `callers` goroutines that each keep
// one call outstanding, so the node always has `callers` calls in flight.
func benchInflight(b *testing.B, conn *demohub.Conn, tool string, callers int) {
	benchRun(b, callers, func(ctx context.Context) error { return benchCall(ctx, conn, tool) })
}

// benchRun makes b.N calls, one at a time when callers is 1 (ns/op is the
// latency), else spread over that many goroutines that each keep one call
// outstanding (ns/op is the inverse of throughput), and reports calls/s.
func benchRun(b *testing.B, callers int, call func(context.Context) error) {
	ctx := b.Context()
	b.ReportAllocs()
	if callers == 1 {
		for b.Loop() {
			if err := call(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range callers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := call(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// benchArgs is what a model typically sends: one short string argument.
var benchArgs = map[string]json.RawMessage{"message": json.RawMessage(`"hello"`)}

func benchCall(ctx context.Context, conn *demohub.Conn, tool string) error {
	res, err := conn.CallExecute(ctx, wsproto.ExecuteTool{ToolName: tool, ToolArgs: benchArgs})
	if err != nil {
		return err
	}
	if res.Status != wsproto.StatusSuccess {
		return fmt.Errorf("call %s answered %s: %s", res.RequestID, res.Status, res.Error)
	}
	return nil
}

const benchToolName = "BenchEcho"

// benchEchoTool answers at once with a short text, so the benchmark measures
// the node, not the tool.
type benchEchoTool struct{}

func (benchEchoTool) Spec() toolhost.Spec {
	return toolhost.Spec{
		Name: benchToolName, Version: "1.0.0", Description: "answers with a short text at once",
		Source: "bench", DistributedExposed: true,
	}
}

func (benchEchoTool) Invoke(context.Context, toolhost.Call) (any, error) { return "hello", nil }

// benchRedactingDiscard is the daemon's log sink (cmd/vcpnode redactingWriter)
// writing to nowhere: the redaction pass over every line is part of the cost.
type benchRedactingDiscard struct{}

func (benchRedactingDiscard) Write(p []byte) (int, error) {
	_, err := io.WriteString(io.Discard, config.Redact(string(p)))
	return len(p), err
}

// startBenchNode starts a fake hub and a node that exposes exactly the tool
// named, waits until the node has registered it, and returns the hub's side
// of the connection. Cleanup stops the node (waiting for Run) and then the hub.
func startBenchNode(b *testing.B, log zerolog.Logger, tool string, configure func(*config.Config), opts ...Option) *demohub.Conn {
	b.Helper()
	const key = "bench-key_0123456789"
	b.Setenv(config.EnvKey, "") // the config's key must win over the environment's

	hub, err := demohub.Start(demohub.Options{Key: key, NoHistory: true})
	if err != nil {
		b.Fatalf("start fake hub: %v", err)
	}
	b.Cleanup(hub.Close) // cleanups run last-in first-out: after the node stopped

	cfg := config.Default()
	cfg.Hub.URL = hub.BaseURL()
	cfg.Hub.Key = key
	cfg.Hub.Name = "bench-node"
	cfg.Node.MaxConcurrent = 64
	cfg.Node.Queue = 64
	// A benchmark repeats one call on purpose; the loop guard would refuse
	// it after repeat_limit calls.
	cfg.Node.RepeatLimit = 0
	configure(&cfg)
	opts = append(opts, WithLocalIPs(func() ([]string, error) { return []string{"127.0.0.1"}, nil }))
	n, err := New(cfg, log, opts...)
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- n.Run(runCtx) }()
	b.Cleanup(func() {
		stop()
		select {
		case err := <-stopped:
			if err != nil {
				b.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			b.Errorf("Run did not return within 30s of cancelling its context")
		}
	})

	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	conn, err := hub.Accept(ctx)
	if err != nil {
		b.Fatalf("node never connected: %v", err)
	}
	msg, err := conn.WaitType(ctx, wsproto.TypeRegisterTools)
	if err != nil {
		b.Fatalf("node never registered its tools: %v", err)
	}
	if rt, ok := msg.(wsproto.RegisterTools); !ok || len(rt.Tools) != 1 {
		b.Fatalf("register_tools = %#v, want exactly %s", msg, tool)
	}
	return conn
}

// benchPluginCommand is a synchronous plugin's whole work: print its answer.
// The quotes make it shell syntax, so it runs under /bin/sh -c.
const benchPluginCommand = `echo '{"status":"success","result":"hello"}'`

// BenchmarkPluginRoundTrip is a synchronous shell plugin called through the
// fake hub, next to the floor: a bare fork/exec of the same /bin/sh -c
// command, sequentially and 16 at a time.
func BenchmarkPluginRoundTrip(b *testing.B) {
	b.Run("floor_sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			benchSpawn(b)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
	b.Run("floor_inflight16", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					benchSpawn(b)
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	})
	for _, bc := range []struct {
		name     string
		inflight int
	}{{"plugin_sequential", 1}, {"plugin_inflight16", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "Plugin")
			writeBenchPlugin(b, dir)
			conn := startBenchNode(b, zerolog.Nop(), "BenchShell", func(cfg *config.Config) {
				cfg.Plugins.Dirs = []string{dir}
				cfg.Plugins.StateDir = b.TempDir()
				cfg.Plugins.Watch = false
			})
			if bc.inflight == 1 {
				benchSequential(b, conn, "BenchShell")
			} else {
				benchInflight(b, conn, "BenchShell", bc.inflight)
			}
		})
	}
}

func benchSpawn(b *testing.B) {
	out, err := exec.Command("/bin/sh", "-c", benchPluginCommand).Output()
	if err != nil || len(out) == 0 {
		b.Errorf("spawn: %v (%q)", err, out)
	}
}

func writeBenchPlugin(b *testing.B, dir string) {
	b.Helper()
	folder := filepath.Join(dir, "BenchShell")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		b.Fatal(err)
	}
	manifest, err := json.Marshal(map[string]any{
		"name": "BenchShell", "displayName": "Bench shell", "pluginType": "synchronous",
		"entryPoint":    map[string]any{"command": benchPluginCommand},
		"communication": map[string]any{"protocol": "stdio", "timeout": 10000},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "plugin-manifest.json"), manifest, 0o644); err != nil {
		b.Fatal(err)
	}
}
