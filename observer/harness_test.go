package observer

import (
	"context"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/hubtest"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// testKey looks like a real key so that a leak into logs would be found.
const testKey = fakehub.TestKey

// harness is a Set of observer connections to a fake hub on loopback,
// with the event log they publish to.
type harness struct {
	t     *testing.T
	rig   *hubtest.Rig
	hub   *demohub.Hub
	set   *Set
	evlog *events.Log
	logs  *testlog.Buffer
	ctx   context.Context // bounds every wait in the test
}

type harnessOpt struct {
	hubOpts demohub.Options
	hub     func(*config.HubConfig)
	// notify shows approvals with the desktop notifier, given no environment.
	notify bool
}

func startHarness(t *testing.T, o harnessOpt) *harness {
	t.Helper()
	rig := hubtest.Start(t, hubtest.Options{Hub: o.hubOpts, Config: func(c *config.Config) {
		if o.hub != nil {
			o.hub(&c.Hub)
		}
	}})
	cfg := rig.Config
	st := Settings{Base: rig.Hub.BaseURL(), Key: testKey, Device: "test-node", Hub: cfg.Hub}
	evlog := events.New(cfg.Observer.Buffer)
	var opts Options
	if o.notify {
		opts.Notify = NewDesktopNotifier(rig.Log, func(string) string { return "" })
	}
	set := New(rig.Log, evlog, func() Settings { return st }, Timings{Retry: hubtest.FastRetry()}, opts)
	rig.Run("Run", func(ctx context.Context) error {
		set.Run(ctx, cfg.Observer.Channels)
		return nil
	})
	return &harness{t: t, rig: rig, hub: rig.Hub, set: set, evlog: evlog, logs: rig.Logs, ctx: rig.Ctx}
}

func (h *harness) acceptObserver(channel string) *demohub.ObserverConn {
	h.t.Helper()
	return h.rig.AcceptObserver(channel)
}

// eventStream hands on the events the log gets from now on that pass f.
func (h *harness) eventStream(f controlapi.EventFilter) <-chan controlapi.Event {
	h.t.Helper()
	sub, _ := h.evlog.Subscribe(false, 0)
	ctx, cancel := context.WithCancel(h.ctx)
	out := make(chan controlapi.Event, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			evs, _, err := sub.Next(ctx, nil)
			if err != nil {
				return
			}
			for _, ev := range evs {
				if f.Match(ev) {
					out <- ev
				}
			}
		}
	}()
	h.t.Cleanup(func() { cancel(); <-done; h.evlog.Unsubscribe(sub) })
	return out
}

// nextEvent returns the next event.
func (h *harness) nextEvent(evs <-chan controlapi.Event) controlapi.Event {
	h.t.Helper()
	select {
	case ev := <-evs:
		return ev
	case <-h.ctx.Done():
		h.t.Fatal("no event came")
		return controlapi.Event{}
	}
}

// waitConnected waits until both channels are connected, VCPlog's for at
// least the sessions-th time, and returns their statuses.
func (h *harness) waitConnected(sessions int) []controlapi.ObserverStatus {
	h.t.Helper()
	var st []controlapi.ObserverStatus
	ok := testwait.Poll(h.ctx, func() bool {
		st = h.set.Statuses()
		ok := len(st) == 2 && st[0].Sessions >= sessions
		for _, o := range st {
			ok = ok && o.Phase == controlapi.PhaseConnected
		}
		return ok
	})
	if !ok {
		h.t.Fatalf("observers never connected: %+v", st)
	}
	return st
}

// waitLog waits until the log holds substr.
func (h *harness) waitLog(substr string) {
	h.t.Helper()
	if !testwait.Poll(h.ctx, func() bool { return strings.Contains(h.logs.String(), substr) }) {
		h.t.Fatalf("log never said %q:\n%s", substr, h.logs.String())
	}
}
