package node

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// How the observer side and the event stream hang on the Node.

func (n *Node) initEvents(cfg config.Config) {
	n.events = newEventLog(cfg.Observer.Buffer)
	n.obs = newObserverSet(n.log, n.events, n.observerSettings, n.timings)
	if cfg.Observer.Notify {
		n.obs.notify = newDesktopNotifier(n.log, n.getenv)
	}
	n.disp.Observe(n.recordCall)
}

func (n *Node) observerSettings() observerSettings {
	st := n.settings()
	return observerSettings{base: st.cfg.Hub.URL, key: st.key, device: st.name, hub: st.cfg.Hub}
}

// runObservers keeps the configured observer connections until ctx ends.
// [observer] enabled and channels are read at start; a reload changing them
// takes effect at the next start (the hub settings at the next reconnect).
func (n *Node) runObservers(ctx context.Context) (wait func()) {
	cfg := n.settings().cfg
	if !cfg.Observer.Enabled {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.obs.run(ctx, cfg.Observer.Channels)
	}()
	return func() { <-done }
}

// callStarted publishes a call this node accepted.
func (n *Node) callStarted(requestID, tool string, local bool) {
	n.events.publish(Event{Source: EventSourceNode, Kind: EventCallStart, Tool: tool, RequestID: requestID, Local: local})
}

// recordCall is the dispatcher's observer: every finished call is an event.
func (n *Node) recordCall(rec toolhost.CallRecord) {
	ms := rec.Duration.Milliseconds()
	ev := Event{
		Time: rec.Finished, Source: EventSourceNode, Kind: EventCallEnd, Tool: rec.Tool, RequestID: rec.RequestID,
		Status: rec.Outcome, DurationMs: &ms, Approval: string(rec.Approval), Local: rec.Local, Text: rec.Error,
	}
	if ev.Text == "" && len(rec.Result) > 0 {
		ev.Text = resultText(rec.Result)
	}
	ev.Text = clipText(ev.Text, maxEventText)
	n.events.publish(ev)
}

// resultText is a result as a person would read it: a string's text, an
// object's "content"/"result"/"message" string, else the JSON itself.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"content", "result", "message", "output"} {
			if json.Unmarshal(obj[k], &s) == nil && s != "" {
				return s
			}
		}
	}
	return strings.TrimSpace(string(raw))
}

// ObserverStatuses are the observer connections, for status.
func (n *Node) ObserverStatuses() []ObserverStatus { return n.obs.statuses() }
