package placeholders

import (
	"errors"
	"testing"
	"time"
)

func TestParseCron(t *testing.T) {
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.Local)
	cases := []struct {
		spec string
		want []time.Time // successive fires after at
	}{
		{"*/30 * * * * *", []time.Time{at.Add(4 * time.Second), at.Add(34 * time.Second)}},
		{"0 */5 * * * *", []time.Time{time.Date(2026, 3, 14, 15, 10, 0, 0, time.Local), time.Date(2026, 3, 14, 15, 15, 0, 0, time.Local)}},
		{"*/5 * * * *", []time.Time{time.Date(2026, 3, 14, 15, 10, 0, 0, time.Local), time.Date(2026, 3, 14, 15, 15, 0, 0, time.Local)}},
		{"0 8 * * 1", []time.Time{time.Date(2026, 3, 16, 8, 0, 0, 0, time.Local), time.Date(2026, 3, 23, 8, 0, 0, 0, time.Local)}},
		{" @hourly ", []time.Time{time.Date(2026, 3, 14, 16, 0, 0, 0, time.Local), time.Date(2026, 3, 14, 17, 0, 0, 0, time.Local)}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			s, err := ParseCron(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			prev := at
			for i, want := range c.want {
				got := s.Next(prev)
				if !got.Equal(want) {
					t.Fatalf("fire %d after %s = %s, want %s", i, prev, got, want)
				}
				prev = got
			}
		})
	}
}

func TestParseCronRejects(t *testing.T) {
	for _, spec := range []string{"", "   ", "* * * *", "* * * * * * *", "61 * * * *", "every minute", "TZ=UTC", "CRON_TZ=Asia/Shanghai"} {
		if _, err := ParseCron(spec); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("ParseCron(%q) = %v, want ErrBadSchedule", spec, err)
		}
	}
}

func TestEvery(t *testing.T) {
	s, err := Every(20 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(100, 0)
	if got := s.Next(at); !got.Equal(at.Add(20 * time.Millisecond)) {
		t.Fatalf("Next = %s", got)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := Every(d); !errors.Is(err, ErrBadSchedule) {
			t.Errorf("Every(%s) = %v, want ErrBadSchedule", d, err)
		}
	}
}

// FuzzParseCron: any refreshIntervalCron a manifest may hold gives a
// schedule or ErrBadSchedule, never a panic; a schedule's fires move forward.
func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"*/30 * * * * *", "0 */5 * * * *", "0 8 * * 1", "@hourly", "@every 1h30m",
		"TZ=UTC 0 8 * * *", "CRON_TZ=Asia/Shanghai 0 0 * * *", "TZ=UTC", "0 0 30 2 *", "1-5/2 * * JAN-MAR MON-FRI", "? * * * *"} {
		f.Add(s)
	}
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseCron(spec)
		if err != nil {
			if !errors.Is(err, ErrBadSchedule) {
				t.Fatalf("ParseCron(%q) = %v, not ErrBadSchedule", spec, err)
			}
			return
		}
		prev := at
		for range 3 {
			next := s.Next(prev)
			if next.IsZero() {
				return // never fires (Feb 30)
			}
			if !next.After(prev) {
				t.Fatalf("ParseCron(%q): Next(%s) = %s, not later", spec, prev, next)
			}
			prev = next
		}
	})
}
