package placeholders

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule says when a source runs next; robfig's cron.Schedule satisfies it.
type Schedule interface {
	// Next returns the first fire time after t; the zero time means never.
	Next(t time.Time) time.Time
}

// ErrBadSchedule is returned for a cron expression or interval that cannot be used.
var ErrBadSchedule = errors.New("invalid schedule")

// cronParser accepts what VCP manifests write in refreshIntervalCron: five
// fields, or six with seconds first, plus descriptors such as @hourly.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour |
	cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a 5- or 6-field cron expression (seconds first when 6).
func ParseCron(spec string) (_ Schedule, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("%w: empty cron expression", ErrBadSchedule)
	}
	// robfig/cron v3.0.1 slices out of range on a time zone prefix with
	// nothing after it ("TZ=UTC"); a manifest must not crash the daemon.
	if (strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")) && !strings.ContainsAny(spec, " \t") {
		return nil, fmt.Errorf("%w: cron %q: a time zone needs fields after it", ErrBadSchedule, spec)
	}
	defer func() { // the same for any other input the library does not expect
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: cron %q cannot be parsed (%v)", ErrBadSchedule, spec, r)
		}
	}()
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: cron %q: %w (use 5 fields, or 6 with seconds first)", ErrBadSchedule, spec, err)
	}
	return s, nil
}

// Every returns a schedule that fires every d after the previous fire.
// Unlike cron's @every it keeps sub-second intervals, which tests use.
func Every(d time.Duration) (Schedule, error) {
	if d <= 0 {
		return nil, fmt.Errorf("%w: interval %s must be positive", ErrBadSchedule, d)
	}
	return every(d), nil
}

type every time.Duration

func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// Clock is the refresher's source of time, replaced by a fake in tests so
// that schedules can be driven without waiting.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer the refresher uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
