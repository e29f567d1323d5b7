package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// Every line status and reconnect write about the connection, for every
// phase, is a sentence a person would write: checked whole, so that a
// phase name dropped into a sentence ("the daemon is backoff") shows.
func TestConnectionLinesReadAsSentences(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	retry := now.Add(time.Minute)
	const dropped = "the server dropped 5 handshakes in a row before answering: likely a wrong key, a wrong path in hub.url, " +
		"[hub] auth = \"header\" with a server that takes the key only in the path (\"auto\" falls back to it), a proxy in between, or a restarting server; the node retries such handshakes at most once a minute (vcpnode reconnect retries now)"
	cases := []struct {
		name      string
		conn      controlapi.ConnectionStatus
		status    []string // lines of status, label and text, spaces collapsed
		reconnect string   // reconnect's error after a 10 s wait ("" when connected)
	}{
		{
			name:   "connected",
			conn:   controlapi.ConnectionStatus{Phase: controlapi.PhaseConnected, Since: now.Add(-time.Minute), Registered: true},
			status: []string{"connection connected for 1m (since " + now.Add(-time.Minute).Local().Format(time.DateTime) + "), tools registered"},
		},
		{
			name: "connected with an earlier error",
			conn: controlapi.ConnectionStatus{Phase: controlapi.PhaseConnected, Since: now.Add(-time.Minute), Registered: true,
				LastError: "read: connection reset", LastErrorAt: at(time.Minute), LastErrorEarlier: true},
			status: []string{"last error (1m ago, from an earlier connection) read: connection reset"},
		},
		{
			name:      "registering",
			conn:      controlapi.ConnectionStatus{Phase: controlapi.PhaseConnected, Since: now.Add(-time.Second)},
			status:    []string{"connection connected for 1s (since " + now.Add(-time.Second).Local().Format(time.DateTime) + "), registering tools"},
			reconnect: "not connected after 10s: the daemon is connected and still registering its tools (0 failed attempts so far)",
		},
		{
			name: "backoff",
			conn: controlapi.ConnectionStatus{Phase: controlapi.PhaseBackoff, Since: now, DisconnectedAt: at(21 * time.Second),
				Attempt: 3, RetryAt: retry, LastError: "dial hub: connection refused", LastErrorAt: at(time.Second)},
			status: []string{"connection disconnected for 21s; next attempt in 1m (3 failed attempts so far)",
				"last error (1s ago) dial hub: connection refused"},
			reconnect: "not connected after 10s: the daemon is waiting to retry (3 failed attempts so far); last error: dial hub: connection refused",
		},
		{
			name: "handshakes dropped",
			conn: controlapi.ConnectionStatus{Phase: controlapi.PhaseBackoff, Since: now, DisconnectedAt: at(time.Hour),
				Attempt: 5, RetryAt: retry, HandshakesDropped: 5,
				LastError: "server closed the connection before answering the handshake", LastErrorAt: at(time.Second)},
			status: []string{"connection disconnected for 1h; next attempt in 1m (5 failed attempts so far)", "handshakes " + dropped},
			reconnect: "not connected after 10s: the daemon is waiting to retry (5 failed attempts so far); " +
				"last error: server closed the connection before answering the handshake; " + dropped,
		},
		{
			name:      "connecting",
			conn:      controlapi.ConnectionStatus{Phase: controlapi.PhaseConnecting, Since: now, DisconnectedAt: at(2 * time.Second), Attempt: 1},
			status:    []string{"connection connecting (disconnected for 2s, 1 failed attempt so far)"},
			reconnect: "not connected after 10s: the daemon is still connecting (1 failed attempt so far)",
		},
		{
			name:      "stopping",
			conn:      controlapi.ConnectionStatus{Phase: controlapi.PhaseStopping, Since: now.Add(-3 * time.Second)},
			status:    []string{"connection stopping for 3s"},
			reconnect: "not connected after 10s: the daemon is stopping (0 failed attempts so far)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			st := controlapi.StatusResponse{Now: now, StartedAt: now.Add(-time.Hour), Connection: c.conn}
			if err := printStatus(&b, st); err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(b.String(), "\n") {
				lines[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, want := range c.status {
				if !lines[want] {
					t.Errorf("status has no line %q:\n%s", want, b.String())
				}
			}
			if c.reconnect != "" {
				if got := notConnectedText(c.conn, 10*time.Second); got != c.reconnect {
					t.Errorf("reconnect says\n%q\nwant\n%q", got, c.reconnect)
				}
			}
		})
	}
}

// TestPluginsLine: the plugins line counts calls, not waiting warm
// interpreters, and shows each warm pool, one that gave up as such.
func TestPluginsLine(t *testing.T) {
	if got, want := pluginsLine(controlapi.PluginsStatus{Calls: 1}), "calls running: 1"; got != want {
		t.Errorf("no warm pool: %q, want %q", got, want)
	}
	got := pluginsLine(controlapi.PluginsStatus{Calls: 0, WarmWaiting: 1, WarmCalls: 7, Warm: []controlapi.WarmPoolStatus{
		{Plugin: "Broken", Size: 1, Cold: true}, {Plugin: "UnitConverter", Waiting: 1, Size: 2},
	}})
	if want := "calls running: 0; warm interpreters waiting: 1 (Broken 0/1 (gave up: runs cold), UnitConverter 1/2); calls run warm: 7"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestStatusShowsToolSources: each tool source's own line, under its name.
func TestStatusShowsToolSources(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := controlapi.StatusResponse{Now: now, StartedAt: now,
		Sources: []controlapi.ToolSourceStatus{{Name: "toy", Summary: "2 tools, all running"}}}
	var b strings.Builder
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	if out := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(out, "source toy 2 tools, all running") {
		t.Errorf("status lacks the source's line:\n%s", b.String())
	}
}
