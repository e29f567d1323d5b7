package toolhost

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestWarnLimiter(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := NewWarnLimiter(time.Minute, 3, func() time.Time { return now })
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	warn := func(kind string) { l.Warn(log, kind, func(e *zerolog.Event) { e.Msg(kind + " happened") }) }

	for range 10 {
		warn("a")
	}
	warn("b") // another kind has its own lines
	if n := strings.Count(buf.String(), "a happened"); n != 3 {
		t.Fatalf("%d lines of kind a in the first minute, want 3", n)
	}
	if strings.Count(buf.String(), "b happened") != 1 {
		t.Fatal("kind b was held back by kind a")
	}
	buf.Reset()
	now = now.Add(time.Minute)
	warn("a")
	if !strings.Contains(buf.String(), `"suppressed":7`) || !strings.Contains(buf.String(), "a happened") {
		t.Fatalf("first line of the next minute = %s, want it to carry suppressed 7", buf.String())
	}
	for range 5 {
		warn("a")
	}
	buf.Reset()
	l.Flush(log)
	if !strings.Contains(buf.String(), `"kind":"a","suppressed":3`) {
		t.Fatalf("Flush = %s, want kind a with 3 suppressed", buf.String())
	}
	buf.Reset()
	l.Flush(log)
	if buf.Len() != 0 {
		t.Errorf("a second Flush logged %s", buf.String())
	}
}
