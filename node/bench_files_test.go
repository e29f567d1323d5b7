package node

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// BenchmarkFileRoundTrip is internal_request_file through a real loopback
// WebSocket, as the server pulls a file: 1 KiB, 64 KiB and 10 MiB files,
// one call at a time (ns/op is the latency) and 64 in flight (ns/op is the
// inverse of throughput). Each call's answer is decoded and its base64
// compared with the file, so a wrong or partial file fails the benchmark.
func BenchmarkFileRoundTrip(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"10MiB", 10 << 20}} {
		for _, inflight := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s_inflight%d", size.name, inflight), func(b *testing.B) {
				root := b.TempDir()
				data := make([]byte, size.bytes)
				rand.Read(data)
				p := filepath.Join(root, "data.bin")
				if err := os.WriteFile(p, data, 0o644); err != nil {
					b.Fatal(err)
				}
				conn := startBenchNode(b, zerolog.Nop(), benchToolName, func(cfg *config.Config) {
					cfg.Node.ExposedTools = []string{benchToolName}
					cfg.Files.Roots = []string{root}
				}, WithTools(benchEchoTool{}))
				want := base64.StdEncoding.EncodeToString(data)
				args := map[string]json.RawMessage{"fileUrl": json.RawMessage(`"file://` + p + `"`)}
				b.SetBytes(int64(size.bytes))
				benchRun(b, inflight, func(ctx context.Context) error { return benchFileCall(ctx, conn, args, want) })
			})
		}
	}
}

func benchFileCall(ctx context.Context, conn *demohub.Conn, args map[string]json.RawMessage, want string) error {
	res, err := conn.CallExecute(ctx, wsproto.ExecuteTool{ToolName: "internal_request_file", ToolArgs: args})
	if err != nil {
		return err
	}
	if res.Status != wsproto.StatusSuccess {
		return fmt.Errorf("call %s answered %s: %s", res.RequestID, res.Status, res.Error)
	}
	var got struct {
		FileData string `json:"fileData"`
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if got.FileData != want {
		return fmt.Errorf("fileData is %d bytes, want the file's %d", len(got.FileData), len(want))
	}
	return nil
}
