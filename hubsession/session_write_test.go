package hubsession

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A file of several chunks arrives whole through the streamed frame.
func TestLargeFileIsStreamedIntact(t *testing.T) {
	root := t.TempDir()
	content := bytes.Repeat([]byte("stream me\x00\xff"), 300_000) // ~3.3 MiB
	if err := os.WriteFile(filepath.Join(root, "big.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Files.Roots = []string{root} }})
	c := h.accept()
	u := (&url.URL{Scheme: "file", Path: filepath.Join(root, "big.bin")}).String()
	res := h.call(c, files.ToolName, map[string]any{"fileUrl": u})
	var body struct{ Status, FileData, MimeType string }
	if res.Status != wsproto.StatusSuccess || json.Unmarshal(res.Result, &body) != nil {
		t.Fatalf("file request = %.300v", res)
	}
	data, err := base64.StdEncoding.DecodeString(body.FileData)
	if err != nil || !bytes.Equal(data, content) || body.Status != "success" {
		t.Fatalf("streamed file: %d bytes (want %d), status %q, %v", len(data), len(content), body.Status, err)
	}
	// The connection goes on after a streamed frame.
	if res := h.call(c, "Echo", map[string]any{"text": "after"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after the stream: %+v", res)
	}
}

// failingStream writes part of a value, then fails like a file read error.
type failingStream struct{ closed chan struct{} }

func (f *failingStream) MaxBytes() int64 { return 1 << 20 }
func (f *failingStream) WriteJSON(w io.Writer) error {
	if _, err := io.WriteString(w, `{"partial":"`+strings.Repeat("p", 64<<10)); err != nil {
		return err
	}
	return errors.New("disk went away")
}
func (f *failingStream) Close() error {
	select {
	case <-f.closed:
	default:
		close(f.closed)
	}
	return nil
}

type streamTool struct{ s toolhost.StreamResult }

func (streamTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Streamer", Description: "returns a stream", Timeout: time.Minute, Builtin: true}
}
func (t streamTool) Invoke(context.Context, toolhost.Call) (any, error) { return t.s, nil }

// A stream that fails after its frame was begun cannot be taken back: the
// node drops that connection (the server fails the call) and reconnects.
func TestStreamFailingHalfwayEndsTheConnection(t *testing.T) {
	fs := &failingStream{closed: make(chan struct{})}
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{streamTool{fs}}, config: func(c *config.Config) {
		c.Node.ExposedTools = append(c.Node.ExposedTools, "Streamer")
	}})
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "s1", ToolName: "Streamer"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-h.ctx.Done():
		t.Fatal("the connection survived a broken frame")
	}
	select {
	case <-fs.closed:
	case <-h.ctx.Done():
		t.Fatal("the stream was never closed")
	}
	second := h.accept()
	if res := h.call(second, "Echo", map[string]any{"text": "again"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after reconnecting: %+v", res)
	}
	h.waitLog("a streamed result failed after its frame was begun")
}

// Results that become ready together are queued together and written in
// batches (writeQueued, gathered into few write(2)s by hubconn): every one
// still reaches the server whole, with its own requestId and answer.
func TestResultsReadyTogetherAllArriveWhole(t *testing.T) {
	gate := newGateTool()
	const calls = 48
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{gate}, config: func(c *config.Config) {
		c.Node.MaxConcurrent = calls
	}})
	conn := h.accept()
	for i := range calls {
		if err := conn.Execute(h.ctx, wsproto.ExecuteTool{RequestID: fmt.Sprint("g-", i), ToolName: "Gate", ToolArgs: map[string]json.RawMessage{}}); err != nil {
			t.Fatal(err)
		}
	}
	for range calls {
		select {
		case <-gate.Started:
		case <-h.ctx.Done():
			t.Fatal("not every call started")
		}
	}
	close(gate.Release)
	seen := map[string]bool{}
	for range calls {
		m, err := conn.WaitType(h.ctx, wsproto.TypeToolResult)
		if err != nil {
			t.Fatalf("after %d results: %v", len(seen), err)
		}
		res := m.(wsproto.ToolResult)
		if got := firstText(t, res); got != "released "+res.RequestID || seen[res.RequestID] {
			t.Fatalf("result %s says %q (seen before: %v)", res.RequestID, got, seen[res.RequestID])
		}
		seen[res.RequestID] = true
	}
}
