package hubsession

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A connection ends with every slot taken by a running call and more calls
// queued behind them. The queued ones never start (the server has already
// failed them), and the next connection's first call runs at once, while
// the old running ones still hold on in their grace: it waits for nothing
// of the ended connection. Judged by order, not time: the grace is a
// minute, and the new call must finish before the old gates are released.
func TestEndedConnectionsCallsNeverDelayTheNext(t *testing.T) {
	gate := newGateTool()
	mark := newGateTool() // records each start and returns at once
	mark.Name = "Mark"
	close(mark.Release)
	h := startHarness(t, harnessOpt{
		tools: []toolhost.Tool{gate, mark},
		config: func(c *config.Config) {
			c.Node.MaxConcurrent = 2
			c.Node.ExposedTools = append(c.Node.ExposedTools, "Mark")
		},
		timings: func(tm *Timings) { tm.SessionCallGrace = time.Minute },
	})
	defer close(gate.Release)
	first := h.accept()
	for i := range 2 {
		id := fmt.Sprintf("old-running-%d", i)
		if err := first.Execute(h.ctx, wsproto.ExecuteTool{RequestID: id, ToolName: "Gate"}); err != nil {
			t.Fatal(err)
		}
		h.waitStarted(gate, id)
	}
	const queued = 20
	for i := range queued {
		if err := first.Execute(h.ctx, wsproto.ExecuteTool{RequestID: fmt.Sprintf("old-queued-%d", i), ToolName: "Mark",
			ToolArgs: map[string]json.RawMessage{}}); err != nil {
			t.Fatal(err)
		}
	}
	waitQueued := func() bool {
		_, q := h.host.disp.Load()
		return q == queued
	}
	for !waitQueued() {
		select {
		case id := <-mark.Started:
			t.Fatalf("%s started while every slot was taken", id)
		case <-h.ctx.Done():
			t.Fatal("the calls never queued")
		case <-time.After(5 * time.Millisecond): // polling the dispatcher's counts
		}
	}

	first.Drop()
	second := h.accept()
	res := h.call(second, "Mark", nil)
	if res.Status != wsproto.StatusSuccess {
		t.Fatalf("the new connection's first call: %+v", res)
	}
	// Only the new call started; the old gates are still running.
	for drained := false; !drained; {
		select {
		case id := <-mark.Started:
			if id != res.RequestID {
				t.Errorf("%s of the ended connection started", id)
			}
		default:
			drained = true
		}
	}
	if running, q := h.host.disp.Load(); q != 0 {
		t.Errorf("after the new call: %d running, %d queued; want the old queue gone", running, q)
	}
	h.waitLog("dropped the calls it carried that had not started")
}
