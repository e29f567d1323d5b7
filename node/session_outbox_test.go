package node

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// The liveness window of the outage test: 100 ms pings, 1 s pong timeout
// (as hubsession's liveness tests).
const (
	livePing = 100 * time.Millisecond
	livePong = time.Second
)

// forwardedTasks lists the task ids of the callbacks c received, in order.
func forwardedTasks(t *testing.T, c *demohub.Conn) []string {
	t.Helper()
	var tasks []string
	for _, f := range c.Received() {
		m, ok := f.Msg.(wsproto.PluginCallbackForward)
		if !ok {
			continue
		}
		var data struct{ TaskID string }
		if err := json.Unmarshal(m.CallbackData, &data); err != nil {
			t.Fatalf("callbackData %s: %v", m.CallbackData, err)
		}
		tasks = append(tasks, data.TaskID)
	}
	return tasks
}

// TestCallbacksWrittenIntoASilentOutageAreSentAgain: callbacks written to a
// connection whose server then stops answering (no pong: a blackhole) are
// not lost with it. The next connection gets every unconfirmed one, in
// order, and none of those a pong had confirmed.
func TestCallbacksWrittenIntoASilentOutageAreSentAgain(t *testing.T) {
	needCommands(t, "python3")
	plugins := t.TempDir()
	gatedAsyncPlugin(t, plugins)
	h := startHarness(t, pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.Hub.PingInterval = config.Duration(livePing)
		c.Hub.PongTimeout = config.Duration(livePong)
	}))
	c := h.accept()
	registered(t, h, c)
	base := callbackURL(h.node, "GatedAsync")
	post := func(task string) { postGatedCallback(t, base, task) }

	confirmed := []string{"confirmed-1", "confirmed-2"}
	for _, task := range confirmed {
		post(task)
	}
	h.waitUntil("the pong to confirm the first callbacks", func() bool {
		return len(forwardedTasks(t, c)) == len(confirmed) && h.node.OutboxWaiting() == 0
	})

	// The server goes silent: it no longer answers pings, and what it still
	// reads from now on is as good as lost.
	c.StopPonging()
	silent := []string{"silent-1", "silent-2", "silent-3"}
	for _, task := range silent {
		post(task)
	}
	h.waitUntil("the callbacks to be written into the silent connection", func() bool {
		return len(forwardedTasks(t, c)) == len(confirmed)+len(silent)
	})
	if got := h.node.OutboxWaiting(); got != len(silent) {
		t.Errorf("outbox holds %d callbacks once written into the silent connection, want the %d unconfirmed ones", got, len(silent))
	}

	c2 := h.accept() // after the liveness check gave c up
	h.waitLog("connection presumed dead")
	h.waitUntil("the unconfirmed callbacks to arrive again", func() bool {
		return len(forwardedTasks(t, c2)) >= len(silent) && h.node.OutboxWaiting() == 0
	})
	if got := forwardedTasks(t, c2); !slices.Equal(got, silent) {
		t.Errorf("the next connection got %v, want exactly the unconfirmed %v, in order", got, silent)
	}
	post("after")
	h.waitUntil("a new callback after the re-sent ones", func() bool { return len(forwardedTasks(t, c2)) == len(silent)+1 })
	if got := forwardedTasks(t, c2); got[len(got)-1] != "after" {
		t.Errorf("the next connection got %v, want the new callback last", got)
	}
}
