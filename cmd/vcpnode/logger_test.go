package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

func TestNewLoggerPicksTheFormat(t *testing.T) {
	tests := []struct {
		name                         string
		format                       string
		out                          output
		wantJSON, wantColour, wantTS bool
	}{
		{"auto on a terminal", "auto", output{tty: true}, false, true, true},
		{"auto in a pipe", "auto", output{}, true, false, true},
		{"auto under journald", "auto", output{journald: true}, true, false, false},
		{"auto, terminal that is the journal", "auto", output{tty: true, journald: true}, true, false, false},
		{"console in a pipe", "console", output{}, false, false, true},
		{"console under journald", "console", output{journald: true}, false, false, false},
		{"json on a terminal", "json", output{tty: true}, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(&buf, config.LogConfig{Level: "info", Format: tt.format}, tt.out)
			if err != nil {
				t.Fatal(err)
			}
			log.Info().Str("k", "v").Msg("hello")
			line := buf.String()
			var fields map[string]any
			isJSON := json.Unmarshal([]byte(line), &fields) == nil
			if isJSON != tt.wantJSON {
				t.Errorf("JSON = %v, want %v: %q", isJSON, tt.wantJSON, line)
			}
			if colour := strings.Contains(line, "\x1b["); colour != tt.wantColour {
				t.Errorf("colour = %v, want %v: %q", colour, tt.wantColour, line)
			}
			var hasTS bool
			if isJSON {
				_, hasTS = fields["time"]
			} else {
				hasTS = !strings.HasPrefix(line, "INF") && !strings.HasPrefix(line, "\x1b[32mINF")
			}
			if hasTS != tt.wantTS {
				t.Errorf("timestamp = %v, want %v: %q", hasTS, tt.wantTS, line)
			}
			if !strings.Contains(line, "hello") {
				t.Errorf("message missing: %q", line)
			}
		})
	}
}

func TestNewLoggerLevel(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, config.LogConfig{Level: "warn", Format: "json"}, output{})
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("quiet")
	log.Warn().Msg("loud")
	if out := buf.String(); strings.Contains(out, "quiet") || !strings.Contains(out, "loud") {
		t.Errorf("warn level wrote %q", out)
	}
	if _, err := newLogger(&buf, config.LogConfig{Level: "trace"}, output{}); err == nil {
		t.Error("level trace accepted")
	}
}

func TestLoggerRedactsTheKey(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, config.LogConfig{Level: "debug", Format: format}, output{})
		if err != nil {
			t.Fatal(err)
		}
		url := "ws://h/vcp-distributed-server/VCP_Key=s3cr3t-k3y"
		log.Error().Str("url", url).Err(os.ErrDeadlineExceeded).Msg("dial " + url)
		if out := buf.String(); strings.Contains(out, "s3cr3t-k3y") || !strings.Contains(out, "VCP_Key=REDACTED") {
			t.Errorf("%s log line = %q", format, out)
		}
		if format == "json" && !json.Valid(buf.Bytes()) {
			t.Errorf("redaction broke the JSON: %q", buf.String())
		}
	}
}

func TestDetectOutput(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, ok := fileID(f)
	if !ok {
		t.Fatalf("fileID(%s) failed", f.Name())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tests := []struct {
		name   string
		file   *os.File
		stream string
		want   output
	}{
		{"regular file", f, "", output{}},
		{"pipe", w, "", output{}},
		{"journal is this file", f, id, output{journald: true}},
		{"journal stream inherited, not ours", f, "1:2", output{}},
		{"no stderr", nil, id, output{}},
	}
	for _, tt := range tests {
		env := map[string]string{"JOURNAL_STREAM": tt.stream}
		if got := detectOutput(tt.file, func(k string) string { return env[k] }); got != tt.want {
			t.Errorf("%s: detectOutput = %+v, want %+v", tt.name, got, tt.want)
		}
	}
	// A character device counts as a terminal; /dev/null is the one every
	// machine has.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		defer null.Close()
		if got := detectOutput(null, func(string) string { return "" }); !got.tty {
			t.Errorf("detectOutput(%s) = %+v, want tty", os.DevNull, got)
		}
	}
}
