package node

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// Warnings a server (or a plugin) can cause at any rate — malformed frames,
// refusals while busy, refused callbacks — go through a throttle: a few
// lines per kind per interval, then a count of what was left out, logged
// with the next line of that kind let through (or by flush).

const (
	throttleEvery = time.Minute
	throttleBurst = 5
	// maxLogValue bounds a value taken from the wire in a log line: a
	// requestId can be megabytes long.
	maxLogValue = 128
)

type logThrottle struct {
	mu    sync.Mutex
	now   func() time.Time
	every time.Duration
	burst int
	kinds map[string]*throttleKind
}

type throttleKind struct {
	start      time.Time // of the current interval
	logged     int       // lines let through in it
	suppressed int       // lines left out since the last report
}

func newLogThrottle(now func() time.Time) *logThrottle {
	return &logThrottle{now: now, every: throttleEvery, burst: throttleBurst, kinds: map[string]*throttleKind{}}
}

// warn logs one warning of kind, built by msg, unless this kind has used its
// lines for the current interval. msg must finish the event (Msg/Send).
func (t *logThrottle) warn(log zerolog.Logger, kind string, msg func(*zerolog.Event)) {
	t.mu.Lock()
	k := t.kinds[kind]
	if k == nil {
		k = &throttleKind{}
		t.kinds[kind] = k
	}
	now := t.now()
	if now.Sub(k.start) >= t.every {
		k.start, k.logged = now, 0
	}
	if k.logged >= t.burst {
		k.suppressed++
		t.mu.Unlock()
		return
	}
	k.logged++
	suppressed := k.suppressed
	k.suppressed = 0
	t.mu.Unlock()

	e := log.Warn()
	if suppressed > 0 {
		e = e.Int("suppressed", suppressed)
	}
	msg(e)
}

// flush reports every count of left-out lines not yet reported.
func (t *logThrottle) flush(log zerolog.Logger) {
	t.mu.Lock()
	counts := map[string]int{}
	for kind, k := range t.kinds {
		if k.suppressed > 0 {
			counts[kind] = k.suppressed
			k.suppressed = 0
		}
	}
	t.mu.Unlock()
	for kind, n := range counts {
		log.Warn().Str("kind", kind).Int("suppressed", n).Msg("similar warnings were left out of the log")
	}
}

// clip shortens a value from the wire for a log line, saying how long it was.
func clip(s string) string {
	if len(s) <= maxLogValue {
		return s
	}
	cut := maxLogValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
