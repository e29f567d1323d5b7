package hubsession

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/hubconn"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A wrong key: the server drops every handshake before answering. After a
// few in a row the node backs off to a minute between attempts (on the
// fake clock, so the test reads each wait it asks for), says so once at
// warn level, shows the count in its state, and retries at once when asked.
func TestDroppedHandshakesBackOffToAMinute(t *testing.T) {
	clk := newFakeClock()
	h := startHarness(t, harnessOpt{timings: func(tm *Timings) {
		tm.Retry = hubconn.DefaultRetryPolicy()
		tm.Clock = clk
		tm.Jitter = func() float64 { return 0.5 }
	}})
	first := h.accept()
	h.hub.RefuseHandshakes(-1)
	first.Drop()

	// The drop itself and the first dropped handshakes: the usual fast steps.
	// The first attempt comes more than a minute after the session that
	// registered, so no drop is taken for an outage behind a proxy
	// (TestDroppedHandshakesJustAfterASessionAreAnOutage).
	p := hubconn.DefaultRetryPolicy()
	for i := range h.engine.timings.EmptyHandshakesBeforeHint {
		w := clk.next(h.ctx, t)
		if !within(w.d, p.Steps[i]) {
			t.Fatalf("wait %d = %v, want about %v", i, w.d, p.Steps[i])
		}
		if i == 0 {
			clk.advance(h.engine.timings.DroppedHandshakeGrace)
		}
		clk.fire(w)
	}
	var last fakeWait
	for i, want := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute} {
		last = clk.next(h.ctx, t)
		if last.d != want {
			t.Fatalf("wait after dropped handshake %d = %v, want %v", i+h.engine.timings.EmptyHandshakesBeforeHint, last.d, want)
		}
		if i < 5 {
			clk.fire(last)
		}
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "likely a wrong key"); n != 1 {
		t.Errorf("the hint was logged %d times, want once", n)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "likely a wrong key") && !strings.Contains(line, `"level":"warn"`) {
			t.Errorf("the hint is not a warning: %s", line)
		}
	}
	s, _ := h.engine.State()
	if s.Phase != controlapi.PhaseBackoff || s.HandshakesDropped < 8 || s.Attempt < 9 {
		t.Errorf("state during the minute's wait = %+v", s)
	}

	// `vcpnode reconnect` while the minute runs: the next attempt is now.
	_, refused := h.hub.Handshakes()
	h.hub.RefuseHandshakes(0)
	h.engine.Reconnect()
	if err := h.hub.WaitHandshakes(h.ctx, func(ok, r int) bool { return ok >= 2 }); err != nil {
		t.Fatalf("no handshake after reconnect (refused before: %d): %v", refused, err)
	}
	h.accept()
	h.waitState("connected, drops forgotten", func(s connState) bool {
		return s.Phase == controlapi.PhaseConnected && s.HandshakesDropped == 0
	})
}

// A TCP proxy in front of a server that restarts accepts every connection
// and closes it before any HTTP answer, as a server does for a wrong key.
// Just after a session registered with this key and path, that is an
// outage: the node keeps its ordinary schedule instead of backing off to a
// minute, logs no wrong-key hint, and is back as soon as the server is.
func TestDroppedHandshakesJustAfterASessionAreAnOutage(t *testing.T) {
	clk := newFakeClock()
	// The key in the path only: each attempt is one handshake the hub refuses.
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Hub.Auth = "path" }, timings: func(tm *Timings) {
		tm.Retry = hubconn.DefaultRetryPolicy()
		tm.Clock = clk
		tm.Jitter = func() float64 { return 0.5 }
	}})
	first := h.accept()
	if _, err := first.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	drops := 3 * h.engine.timings.EmptyHandshakesBeforeHint
	h.hub.RefuseHandshakes(drops)
	first.Drop()

	p := hubconn.DefaultRetryPolicy()
	for i := range drops + 1 { // the loss, then each dropped handshake
		w := clk.next(h.ctx, t)
		if w.d > p.Ceiling {
			t.Fatalf("wait %d after a session that registered = %v: backed off as from a wrong key", i, w.d)
		}
		clk.fire(w)
	}
	h.accept()
	if _, refused := h.hub.Handshakes(); refused != drops {
		t.Errorf("the hub dropped %d handshakes, want %d", refused, drops)
	}
	s := h.waitState("connected again", func(s connState) bool { return s.Phase == controlapi.PhaseConnected && s.Sessions == 2 })
	if s.HandshakesDropped != 0 {
		t.Errorf("state counts %d dropped handshakes", s.HandshakesDropped)
	}
	if strings.Contains(h.logs.String(), "likely a wrong key") {
		t.Errorf("the wrong-key hint was logged for an outage")
	}
}

// advance moves the clock on without a wait firing.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startWithWrongKeyFile starts a node whose key file holds a wrong key,
// backing off on the default policy by a fake clock.
func startWithWrongKeyFile(t *testing.T) (*harness, *fakeClock, string) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("a-wrong-key-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	h := startHarness(t, harnessOpt{
		config: func(c *config.Config) { c.Hub.Key, c.Hub.KeyFile = "", keyFile },
		timings: func(tm *Timings) {
			tm.Retry = hubconn.DefaultRetryPolicy()
			tm.Clock = clk
			tm.KeyFilePoll = 10 * time.Millisecond
		},
	})
	return h, clk, keyFile
}

// A key file fixed while the node backs off from dropped handshakes: the
// node notices and connects at once, with the new key.
func TestChangedKeyFileRetriesAtOnce(t *testing.T) {
	h, clk, keyFile := startWithWrongKeyFile(t)
	for range h.engine.timings.EmptyHandshakesBeforeHint {
		clk.fire(clk.next(h.ctx, t))
	}
	w := clk.next(h.ctx, t) // the first long wait: left pending
	if w.d < 5*time.Second {
		t.Fatalf("wait after %d dropped handshakes = %v, want the long backoff", h.engine.timings.EmptyHandshakesBeforeHint, w.d)
	}
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.accept()
	h.waitLog("the key file changed")
}

// A key file fixed after the node read the key and before the long
// backoff began (here while the first, unwatched, wait runs): the long
// wait compares the file with what the key was read from, so it ends at
// once, without its timer ever firing.
func TestKeyFileChangedBeforeTheBackoffRetriesAtOnce(t *testing.T) {
	h, clk, keyFile := startWithWrongKeyFile(t)
	w := clk.next(h.ctx, t) // after the first dropped handshake
	if err := os.WriteFile(keyFile, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for w.d < 5*time.Second { // the fast steps, still with the key read at start
		clk.fire(w)
		w = clk.next(h.ctx, t)
	}
	// The long wait is left pending: only the key file can end it.
	h.accept()
	h.waitLog("the key file changed")
}

// After a reconnect, the previous connection's error is kept for the
// record and marked as from an earlier connection, dated when it happened
// (not when the new connection began).
func TestStateMarksAnEarlierConnectionsError(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	first := h.accept()
	first.CloseWith(4000, "going away for a test")
	h.accept()
	s := h.waitState("connected again", func(s connState) bool { return s.Phase == controlapi.PhaseConnected && s.Sessions == 2 })
	if s.LastError == "" || !s.LastErrorEarlier || !s.LastErrorAt.Before(s.Since) {
		t.Errorf("state after the reconnect: error %q, earlier %v, at %v, connected since %v; want the old error marked as earlier",
			s.LastError, s.LastErrorEarlier, s.LastErrorAt, s.Since)
	}
}
