package wsproto

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkEncodeToolResult measures Encode as the node calls it. Of the two
// allocations per call, one is the caller boxing the ToolResult into a
// Message; Encode itself allocates only the frame.
func BenchmarkEncodeToolResult(b *testing.B) {
	text := strings.Repeat("Rendered 1 frame of the sunset clip; GPU at 37%.\n", 20) // ~1 KiB
	small, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
	large, _ := json.Marshal(map[string]any{"status": "success", "mimeType": "image/png",
		"fileData": strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAf", 64<<10/40)}) // ~64 KiB
	for _, bc := range []struct {
		name string
		msg  ToolResult
	}{
		{"success-1KiB", ToolResult{RequestID: "mdx3k9q0-a1b2c3d", Status: StatusSuccess, Result: small}},
		{"success-64KiB", ToolResult{RequestID: "mdx3k9q0-a1b2c3d", Status: StatusSuccess, Result: large}},
		{"error", ToolResult{RequestID: "mdx3k9q0-a1b2c3d", Status: StatusError, Error: "tool VideoGen timed out after 297s: \"ffmpeg\" still running"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			frame, err := Encode(bc.msg)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(bc.msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeExecuteTool(b *testing.B) {
	small := []byte(`{"type":"execute_tool","data":{"requestId":"mdx3k9q0-a1b2c3d","toolName":"VideoGen",` +
		`"toolArgs":{"command":"Generate","prompt":"sunset over the sea","seconds":"10","maid":"Nova"}}}`)
	var river []map[string]string
	for i := range 100 {
		river = append(river, map[string]string{"role": "user",
			"content": "message " + strconv.Itoa(i) + ": " + strings.Repeat("what did I write yesterday? ", 20)})
	}
	riverJSON, _ := json.Marshal(river)
	large := []byte(`{"type":"execute_tool","data":{"requestId":"mdx3k9q0-a1b2c3d","toolName":"DiaryReader",` +
		`"toolArgs":{"maid":"Nova","river_context":` + string(riverJSON) + `}}}`)
	huge := []byte(`{"type":"execute_tool","data":{"requestId":"mdx3k9q0-a1b2c3d","toolName":"FileWriter",` +
		`"toolArgs":{"path":"/tmp/x","content":"` + strings.Repeat("0123456789abcdef", 10<<20/16) + `"}}}`)
	for _, bc := range []struct {
		name  string
		frame []byte
	}{{"string-args", small}, {"river-context-" + strconv.Itoa(len(large)>>10) + "KiB", large}, {"args-10MiB", huge}} {
		for _, dec := range []struct {
			name string
			fn   func([]byte) (Message, error)
		}{{"Decode", Decode}, {"DecodeOwned", DecodeOwned}} {
			b.Run(bc.name+"/"+dec.name, func(b *testing.B) {
				if _, err := dec.fn(bc.frame); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(bc.frame)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := dec.fn(bc.frame); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
