package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const answerOK = `{"status":"success","result":"ok"}`

func TestFindAnswer(t *testing.T) {
	cases := []struct {
		name, out, want string
	}{
		{"whole output", "  " + answerOK + "\n", answerOK},
		{"whole output without status", `{"data":1}`, `{"data":1}`},
		{"logs before", "loading {config\n" + answerOK + "\n", answerOK},
		{"logs after", answerOK + "\ndone\n", answerOK},
		{"last answer wins", `{"status":"error","error":"a"}` + "\n" + answerOK, answerOK},
		{"status-less objects skipped", answerOK + "\n{\"level\":\"info\"}\n", answerOK},
		{"pretty-printed among logs", "x\n{\n  \"status\": \"success\",\n  \"result\": {\"a\": [1, {\"b\": 2}]}\n}\ntrailer", "{\n  \"status\": \"success\",\n  \"result\": {\"a\": [1, {\"b\": 2}]}\n}"},
		{"unterminated object before the answer", `{"progress": [` + "\n" + answerOK, answerOK},
		{"nested answer inside a non-answer", `{"wrap": ` + answerOK + `}`, `{"wrap": ` + answerOK + `}`},
		{"any status ends a finished run", "log " + `{"status":"failed"}` + "\nbye", `{"status":"failed"}`},
		{"an empty status is none", "log " + `{"status":""}`, ""},
		{"no JSON", "plain text", ""},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(findAnswer([]byte(c.out))); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestScanAnswerStreams(t *testing.T) {
	cases := []struct {
		name, out, want string
		wantErr         error
	}{
		{"first answer wins", answerOK + `{"status":"error","error":"later"}`, answerOK, nil},
		{"logs and brace noise first", "log {\n{ not json }\n{\"level\":1}\n" + answerOK, answerOK, nil},
		{"pretty-printed", "{\n \"status\" :\n  \"success\"\n}\n", "{\n \"status\" :\n  \"success\"\n}", nil},
		{"no answer", "just logs {x}\n", "", io.EOF},
	}
	for _, c := range cases {
		for _, oneByte := range []bool{false, true} {
			name := c.name
			var r io.Reader = strings.NewReader(c.out)
			if oneByte {
				name += "/one byte at a time"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				capt := &capture{max: 1 << 20}
				got, err := scanAnswer(r, capt)
				if string(got) != c.want || !errors.Is(err, c.wantErr) {
					t.Fatalf("got %q, %v; want %q, %v", got, err, c.want, c.wantErr)
				}
				if c.wantErr != nil && string(capt.buf) != c.out {
					t.Errorf("captured %q, want all of the output", capt.buf)
				}
			})
		}
	}
}

func TestScanAnswerStopsAtTheCap(t *testing.T) {
	capt := &capture{max: 64}
	_, err := scanAnswer(strings.NewReader(strings.Repeat("log line\n", 100)+answerOK), capt)
	if !errors.Is(err, errCaptureFull) || len(capt.buf) != 64 {
		t.Fatalf("err %v, captured %d", err, len(capt.buf))
	}
}

func TestAnswerResult(t *testing.T) {
	cases := []struct {
		name, answer string
		want         string // marshalled result, or the error text after "error: "
	}{
		{"object result", `{"status":"success","result":{"a":1,"content":[{"type":"text","text":"t"}]}}`, `{"a":1,"content":[{"type":"text","text":"t"}]}`},
		{"string result", `{"status":"success","result":"hello"}`, `{"content":[{"type":"text","text":"hello"}]}`},
		{"JSON-looking string stays text", `{"status":"success","result":"{\"a\":1}"}`, `{"content":[{"type":"text","text":"{\"a\":1}"}]}`},
		{"number result", `{"status":"success","result":42}`, `{"content":[{"type":"text","text":"42"}]}`},
		{"no result", `{"status":"success"}`, `null`},
		{"messageForAI alone", `{"status":"success","messageForAI":"look"}`, `{"content":[{"type":"text","text":"look"}],"messageForAI":"look"}`},
		{"string result and messageForAI", `{"status":"success","result":"r","messageForAI":"m"}`, `{"content":[{"type":"text","text":"r"},{"type":"text","text":"m"}],"messageForAI":"m"}`},
		{"special action merged", `{"status":"success","result":{"a":1},"_specialAction":"create_canvas","payload":{"p":2}}`, `{"_specialAction":"create_canvas","a":1,"payload":{"p":2}}`},
		{"result keys win", `{"status":"success","result":{"payload":"mine"},"payload":"top"}`, `{"payload":"mine"}`},
		{"no status: whole object", `{"data":[1]}`, `{"data":[1]}`},
		{"error text", `{"status":"error","error":"bad input"}`, `error: bad input`},
		{"error object kept as JSON", `{"status":"error","error":{"code":429, "msg":"slow down"}}`, `error: {"code":429,"msg":"slow down"}`},
		{"error falls back to message", `{"status":"error","message":"from message"}`, `error: from message`},
		{"error without text", `{"status":"error"}`, `error: plugin "P" reported an error without a message`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := answerResult("P", json.RawMessage(c.answer))
			if err != nil {
				if got := "error: " + err.Error(); got != c.want {
					t.Fatalf("got %q, want %q", got, c.want)
				}
				return
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(buf.String()); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func FuzzFindAnswer(f *testing.F) {
	for _, s := range []string{answerOK, "x {", `{"a":{"b":`, "{\n\"status\":\"error\"}\n{", "{{{{}}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		if raw := findAnswer(out); raw != nil && !json.Valid(raw) {
			t.Fatalf("invalid answer %q", raw)
		}
		capt := &capture{max: len(out) + 1}
		if raw, err := scanAnswer(bytes.NewReader(out), capt); err == nil && !isAnswer(raw) {
			t.Fatalf("scanAnswer returned a non-answer %q", raw)
		}
	})
}

// TestCaptureKeepsTheTailPastTheCap: whatever the read sizes, the bytes
// kept past the cap are exactly the last tailMax of them.
func TestCaptureKeepsTheTailPastTheCap(t *testing.T) {
	var all []byte
	for i := range 5000 {
		all = append(all, fmt.Sprintf("line %d\n", i)...)
	}
	for _, chunk := range []int{1, 7, 100, 4096, len(all)} {
		for _, tailMax := range []int{1, 10, 999, len(all)} {
			c := &capture{max: 50, tailMax: tailMax}
			if err := c.readFrom(&chunkReader{data: all, n: chunk}); err != nil {
				t.Fatal(err)
			}
			past := all[50:]
			want := past[max(0, len(past)-tailMax):]
			if got := c.tailBytes(); !bytes.Equal(got, want) || string(c.buf) != string(all[:50]) || c.total != int64(len(all)) {
				t.Fatalf("chunk %d, tail %d: tail %q…, want %q…", chunk, tailMax, got[:min(20, len(got))], want[:min(20, len(want))])
			}
		}
	}
}

// chunkReader returns data n bytes at a time.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[n:]
	return n, nil
}
