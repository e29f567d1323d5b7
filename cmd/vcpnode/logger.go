package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
)

// output describes where the logs go.
type output struct {
	// tty: stderr is a terminal, so people read it and colours help.
	tty bool
	// journald: stderr is connected to the journal, which stamps lines itself.
	journald bool
}

// detectOutput inspects stderr. A character device counts as a terminal
// (this also matches /dev/null, where the choice does not matter).
// JOURNAL_STREAM is inherited by children, e.g. a shell opened from a
// terminal that systemd started, so as systemd documents it is trusted only
// when it names stderr's own device and inode.
func detectOutput(stderr *os.File, getenv func(string) string) output {
	var o output
	if stderr == nil {
		return o
	}
	if fi, err := stderr.Stat(); err == nil {
		o.tty = fi.Mode()&os.ModeCharDevice != 0
	}
	if stream := getenv("JOURNAL_STREAM"); stream != "" {
		id, ok := fileID(stderr)
		o.journald = !ok || id == stream
	}
	return o
}

// newLogger builds the logger: console lines (coloured on a terminal that
// is not the journal) or JSON; "auto" picks console on a terminal. Under
// journald timestamps are left out. Every line passes through config.Redact.
func newLogger(w io.Writer, cfg config.LogConfig, out output) (zerolog.Logger, error) {
	level, err := parseLevel(cfg.Level)
	if err != nil {
		return zerolog.Nop(), err
	}
	w = redactingWriter{w}
	format := cfg.Format
	if format == "auto" || format == "" {
		format = "json"
		if out.tty && !out.journald {
			format = "console"
		}
	}
	switch format {
	case "console":
		cw := zerolog.ConsoleWriter{Out: w, NoColor: !out.tty || out.journald, TimeFormat: time.DateTime}
		if out.journald {
			cw.PartsExclude = []string{zerolog.TimestampFieldName}
		}
		w = cw
	case "json":
	default:
		return zerolog.Nop(), fmt.Errorf("log format %q is not one of auto, console, json", cfg.Format)
	}
	ctx := zerolog.New(w).Level(level).With()
	if !out.journald {
		ctx = ctx.Timestamp()
	}
	return ctx.Logger(), nil
}

func parseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "debug":
		return zerolog.DebugLevel, nil
	case "info", "":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	}
	return zerolog.NoLevel, fmt.Errorf("log level %q is not one of debug, info, warn, error", s)
}

// redactingWriter hides VCP keys in log lines. zerolog hands each event to
// Write whole, so a key never straddles two calls.
type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if _, err := r.w.Write(config.RedactBytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
