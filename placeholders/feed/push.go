package feed

import (
	"time"

	"github.com/rs/zerolog"
)

// Push is one hub session's part in keeping the server's placeholder
// values current: the whole snapshot after connecting (the server dropped
// this node's keys when the previous connection ended), then only the keys
// that changed, at most one push per interval.
//
// It belongs to the session's run loop, which is the only writer: Changed
// wakes the loop at a change (call Schedule), Due when the coalesced push
// is to go out (call SendChanges).
type Push struct {
	feed     *Feed
	interval time.Duration
	write    func(values map[string]string) error
	log      zerolog.Logger
	version  uint64 // the store version the server has seen

	changed <-chan struct{} // nil while a push is already scheduled
	timer   *time.Timer
	due     <-chan time.Time // nil unless a push is scheduled
}

// NewPush returns a session's Push: write sends one update to the hub.
func (f *Feed) NewPush(interval time.Duration, write func(values map[string]string) error, log zerolog.Logger) *Push {
	return &Push{feed: f, interval: interval, write: write, log: log}
}

// Changed is closed when the store changes; nil while a push is scheduled.
func (p *Push) Changed() <-chan struct{} { return p.changed }

// Due delivers when the scheduled push is to go out; nil if none is.
func (p *Push) Due() <-chan time.Time { return p.due }

// SendSnapshot pushes every value, if there is any.
func (p *Push) SendSnapshot() error {
	p.changed = p.feed.store.Changed() // before reading, so no change is missed
	values, v := p.feed.store.Snapshot()
	p.version = v
	return p.send(values, "snapshot")
}

// Schedule is called when the store changed: the change goes out one
// interval later, with whatever else changes meanwhile.
func (p *Push) Schedule() {
	p.changed = nil
	p.timer = time.NewTimer(p.interval)
	p.due = p.timer.C
}

// SendChanges pushes the keys changed since the last push.
func (p *Push) SendChanges() error {
	p.due, p.timer = nil, nil
	p.changed = p.feed.store.Changed()
	values, v := p.feed.store.Since(p.version)
	p.version = v
	return p.send(values, "changes")
}

func (p *Push) send(values map[string]string, what string) error {
	if len(values) == 0 {
		return nil
	}
	err := p.write(values)
	if err == nil {
		p.feed.pushes.Add(1)
		p.log.Debug().Int("placeholders", len(values)).Str("push", what).Msg("sent update_static_placeholders")
	}
	return err
}

// Stop releases the timer of a scheduled push.
func (p *Push) Stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
