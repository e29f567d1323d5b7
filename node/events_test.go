package node

import (
	"context"
	"testing"
	"time"
)

func TestEventLogRingAndSlowSubscriber(t *testing.T) {
	l := newEventLog(16)
	slow := l.subscribe(false, 0)
	// Nobody reads slow: publishing must neither block nor grow without bound.
	for i := range 1000 {
		l.publish(Event{Kind: EventInfo, Tool: "T", Text: string(rune('a' + i%26))})
	}
	kept := l.since(0)
	if len(kept) != 16 || kept[0].ID != 985 || kept[15].ID != 1000 {
		t.Fatalf("ring kept %d events, ids %d..%d", len(kept), kept[0].ID, kept[len(kept)-1].ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, dropped, err := slow.next(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != subscriberBuffer || dropped != 1000-subscriberBuffer || evs[len(evs)-1].ID != 1000 {
		t.Fatalf("slow subscriber got %d events, %d dropped, last id %d", len(evs), dropped, evs[len(evs)-1].ID)
	}
	l.unsubscribe(slow)

	back := l.subscribe(true, 995)
	evs, _, _ = back.next(ctx, nil)
	if len(evs) != 5 || evs[0].ID != 996 {
		t.Fatalf("backlog since 995: %d events from %d", len(evs), evs[0].ID)
	}
	stop := make(chan struct{})
	close(stop)
	if _, _, err := back.next(ctx, stop); err == nil {
		t.Fatal("next returned no error after stop")
	}
}

func TestEventFilter(t *testing.T) {
	ev := Event{Source: EventSourceServer, Tool: "A", Kind: EventToolLog}
	for _, tt := range []struct {
		f    EventFilter
		want bool
	}{
		{EventFilter{}, true},
		{EventFilter{Source: EventSourceNode}, false},
		{EventFilter{Source: EventSourceServer, Tool: "A"}, true},
		{EventFilter{Tool: "B"}, false},
		{EventFilter{Kinds: []string{EventCallEnd}}, false},
		{EventFilter{Kinds: []string{EventCallEnd, EventToolLog}}, true},
	} {
		if got := tt.f.Match(ev); got != tt.want {
			t.Errorf("%+v.Match = %v", tt.f, got)
		}
	}
	if !(EventFilter{Tool: "X"}).Match(Event{Kind: EventDropped}) {
		t.Error("a dropped marker was filtered out")
	}
}
