package node

import (
	"time"

	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/wsproto"
)

// placeholderPush is one session's part in keeping the server's placeholder
// values current: the whole snapshot after connecting (the server dropped
// this node's keys when the previous connection ended), then only the keys
// that changed, at most one push per push_interval.
//
// It belongs to the session's run loop, which is the only writer: changed
// wakes the loop at a change, due when the coalesced push is to go out.
type placeholderPush struct {
	feed     *placeholderFeed
	store    *placeholders.Store
	interval time.Duration
	version  uint64 // the store version the server has seen

	changed <-chan struct{} // nil while a push is already scheduled
	timer   *time.Timer
	due     <-chan time.Time // nil unless a push is scheduled
}

func (s *session) newPlaceholderPush() *placeholderPush {
	return &placeholderPush{feed: s.n.ph, store: s.n.ph.store, interval: s.st.cfg.Placeholders.PushInterval.D()}
}

// sendSnapshot pushes every value, if there is any.
func (p *placeholderPush) sendSnapshot(s *session) error {
	p.changed = p.store.Changed() // before reading, so no change is missed
	values, v := p.store.Snapshot()
	p.version = v
	return p.send(s, values, "snapshot")
}

// schedule is called when the store changed: the change goes out one
// interval later, with whatever else changes meanwhile.
func (p *placeholderPush) schedule() {
	p.changed = nil
	p.timer = time.NewTimer(p.interval)
	p.due = p.timer.C
}

// sendChanges pushes the keys changed since the last push.
func (p *placeholderPush) sendChanges(s *session) error {
	p.due, p.timer = nil, nil
	p.changed = p.store.Changed()
	values, v := p.store.Since(p.version)
	p.version = v
	return p.send(s, values, "changes")
}

func (p *placeholderPush) send(s *session, values map[string]string, what string) error {
	if len(values) == 0 {
		return nil
	}
	err := s.writeMessage(wsproto.UpdateStaticPlaceholders{ServerName: s.st.name, Placeholders: values})
	if err == nil {
		p.feed.pushes.Add(1)
		s.log.Debug().Int("placeholders", len(values)).Str("push", what).Msg("sent update_static_placeholders")
	}
	return err
}

func (p *placeholderPush) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}
