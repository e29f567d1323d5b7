package events

import (
	"context"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

func TestEventLogRingAndSlowSubscriber(t *testing.T) {
	l := New(16)
	slow, _ := l.Subscribe(false, 0)
	// Nobody reads slow: publishing must neither block nor grow without bound.
	for i := range 1000 {
		l.Publish(Event{Kind: controlapi.EventInfo, Tool: "T", Text: string(rune('a' + i%26))})
	}
	kept := l.Since(0)
	if len(kept) != 16 || kept[0].ID != 985 || kept[15].ID != 1000 {
		t.Fatalf("ring kept %d events, ids %d..%d", len(kept), kept[0].ID, kept[len(kept)-1].ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, dropped, err := slow.Next(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != subscriberBuffer || dropped != 1000-subscriberBuffer || evs[len(evs)-1].ID != 1000 {
		t.Fatalf("slow subscriber got %d events, %d dropped, last id %d", len(evs), dropped, evs[len(evs)-1].ID)
	}
	l.Unsubscribe(slow)

	back, last := l.Subscribe(true, 995)
	if last != 1000 {
		t.Errorf("Subscribe: last = %d, want 1000", last)
	}
	evs, _, _ = back.Next(ctx, nil)
	if len(evs) != 5 || evs[0].ID != 996 {
		t.Fatalf("backlog since 995: %d events from %d", len(evs), evs[0].ID)
	}
	stop := make(chan struct{})
	close(stop)
	if _, _, err := back.Next(ctx, stop); err == nil {
		t.Fatal("next returned no error after stop")
	}
}

func TestEventFilter(t *testing.T) {
	ev := Event{Source: controlapi.EventSourceServer, Tool: "A", Kind: controlapi.EventToolLog}
	for _, tt := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Source: controlapi.EventSourceNode}, false},
		{Filter{Source: controlapi.EventSourceServer, Tool: "A"}, true},
		{Filter{Tool: "B"}, false},
		{Filter{Kinds: []string{controlapi.EventCallEnd}}, false},
		{Filter{Kinds: []string{controlapi.EventCallEnd, controlapi.EventToolLog}}, true},
	} {
		if got := tt.f.Match(ev); got != tt.want {
			t.Errorf("%+v.Match = %v", tt.f, got)
		}
	}
	if !(Filter{Tool: "X"}).Match(Event{Kind: controlapi.EventDropped}) {
		t.Error("a dropped marker was filtered out")
	}
}
