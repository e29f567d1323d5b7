package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/fakehub"
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
			conn := startBenchNode(b, log)
			if bc.inflight == 1 {
				benchSequential(b, conn)
			} else {
				benchInflight(b, conn, bc.inflight)
			}
		})
	}
}

func benchSequential(b *testing.B, conn *fakehub.Conn) {
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := benchCall(ctx, conn); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// benchInflight spreads b.N calls over `callers` goroutines that each keep
// one call outstanding, so the node always has `callers` calls in flight.
func benchInflight(b *testing.B, conn *fakehub.Conn, callers int) {
	ctx := b.Context()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range callers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := benchCall(ctx, conn); err != nil {
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

func benchCall(ctx context.Context, conn *fakehub.Conn) error {
	res, err := conn.CallExecute(ctx, wsproto.ExecuteTool{ToolName: benchToolName, ToolArgs: benchArgs})
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
	_, err := io.WriteString(io.Discard, Redact(string(p)))
	return len(p), err
}

// startBenchNode starts a fake hub and a node exposing benchEchoTool, waits
// until the node has registered its tools, and returns the hub's side of the
// connection. Cleanup stops the node (waiting for Run) and then the hub.
func startBenchNode(b *testing.B, log zerolog.Logger) *fakehub.Conn {
	b.Helper()
	const key = "bench-key_0123456789"
	b.Setenv(EnvKey, "") // the config's key must win over the environment's

	hub, err := fakehub.Start(fakehub.Options{Key: key, NoHistory: true})
	if err != nil {
		b.Fatalf("start fake hub: %v", err)
	}
	b.Cleanup(hub.Close) // cleanups run last-in first-out: after the node stopped

	cfg := DefaultConfig()
	cfg.Hub.URL = hub.BaseURL()
	cfg.Hub.Key = key
	cfg.Hub.Name = "bench-node"
	cfg.Node.ExposedTools = []string{benchToolName}
	cfg.Node.MaxConcurrent = 64
	cfg.Node.Queue = 64
	n, err := New(cfg, log, WithTools(benchEchoTool{}),
		WithLocalIPs(func() ([]string, error) { return []string{"127.0.0.1"}, nil }))
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
		b.Fatalf("register_tools = %#v, want exactly %s", msg, benchToolName)
	}
	return conn
}
