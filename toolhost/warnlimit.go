package toolhost

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// WarnLimiter keeps warnings that others can cause at any rate (malformed
// frames from the server, callbacks from plugins, refusals while busy) from
// flooding the log: a few lines per kind per interval, then a count of what
// was left out, logged as "suppressed" with the next line of that kind let
// through, or by Flush.
type WarnLimiter struct {
	mu    sync.Mutex
	now   func() time.Time
	every time.Duration
	burst int
	kinds map[string]*warnKind
}

type warnKind struct {
	start      time.Time // of the current interval
	logged     int       // lines let through in it
	suppressed int       // lines left out since the last report
}

// Default WarnLimiter settings: 5 lines per kind per minute.
const (
	WarnBurst = 5
	WarnEvery = time.Minute
)

// NewWarnLimiter lets burst lines of each kind through per interval every;
// now is the clock (time.Now outside tests).
func NewWarnLimiter(every time.Duration, burst int, now func() time.Time) *WarnLimiter {
	return &WarnLimiter{now: now, every: every, burst: burst, kinds: map[string]*warnKind{}}
}

// Warn logs one warning of kind, built by msg, unless this kind has used its
// lines for the current interval. msg must finish the event (Msg or Send).
func (l *WarnLimiter) Warn(log zerolog.Logger, kind string, msg func(*zerolog.Event)) {
	l.mu.Lock()
	k := l.kinds[kind]
	if k == nil {
		k = &warnKind{}
		l.kinds[kind] = k
	}
	now := l.now()
	if now.Sub(k.start) >= l.every {
		k.start, k.logged = now, 0
	}
	if k.logged >= l.burst {
		k.suppressed++
		l.mu.Unlock()
		return
	}
	k.logged++
	suppressed := k.suppressed
	k.suppressed = 0
	l.mu.Unlock()

	e := log.Warn()
	if suppressed > 0 {
		e = e.Int("suppressed", suppressed)
	}
	msg(e)
}

// Flush reports every count of left-out lines not yet reported.
func (l *WarnLimiter) Flush(log zerolog.Logger) {
	l.mu.Lock()
	counts := map[string]int{}
	for kind, k := range l.kinds {
		if k.suppressed > 0 {
			counts[kind] = k.suppressed
			k.suppressed = 0
		}
	}
	l.mu.Unlock()
	for kind, n := range counts {
		log.Warn().Str("kind", kind).Int("suppressed", n).Msg("similar warnings were left out of the log")
	}
}
