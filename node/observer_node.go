package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/toolhost"
)

// How the observer side and the event stream hang on the Node.

func (n *Node) initEvents(cfg config.Config) {
	n.events = events.New(cfg.Observer.Buffer)
	n.obs = newObserverSet(n.log, n.events, n.observerSettings, n.timings)
	n.obs.guard = n.guard
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
		n.guard("observers", func() { n.obs.run(ctx, cfg.Observer.Channels) })
	}()
	return func() { <-done }
}

// publishLocalApprovals turns each call that starts waiting for the
// owner's approval into an event, until ctx ends. How it ended is in the
// call's end event.
func (n *Node) publishLocalApprovals(ctx context.Context) {
	seen := map[string]bool{}
	for {
		changed := n.Approvals().Changes()
		now := map[string]bool{}
		for _, p := range n.Approvals().Pending() {
			now[p.ID] = true
			if !seen[p.ID] {
				n.events.Publish(controlapi.Event{
					Source: controlapi.EventSourceNode, Kind: controlapi.EventApprovalRequest, Tool: p.Tool, RequestID: p.RequestID,
					Text: events.ClipText(argSummaryText(p.Args), events.MaxText), ApprovalID: p.ID,
				})
			}
		}
		seen = now
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// callStarted publishes a call this node accepted.
func (n *Node) callStarted(requestID, tool string, local bool) {
	n.events.Publish(controlapi.Event{Source: controlapi.EventSourceNode, Kind: controlapi.EventCallStart, Tool: tool, RequestID: requestID, Local: local})
}

// recordCall is the dispatcher's observer: every finished call is an event.
func (n *Node) recordCall(rec toolhost.CallRecord) {
	ms := rec.Duration.Milliseconds()
	ev := controlapi.Event{
		Time: rec.Finished, Source: controlapi.EventSourceNode, Kind: controlapi.EventCallEnd, Tool: rec.Tool, RequestID: rec.RequestID,
		Status: rec.Outcome, DurationMs: &ms, Approval: string(rec.Approval), Local: rec.Local, Text: rec.Error,
	}
	switch n := len(rec.Result); {
	case ev.Text != "" || n == 0:
	case n <= maxParsedResult:
		ev.Text = resultText(rec.Result)
	default: // a file's base64, say: not worth decoding on the call's path
		ev.Text = fmt.Sprintf("(a result of %d bytes)", n)
	}
	ev.Text = events.ClipText(ev.Text, events.MaxText)
	n.events.Publish(ev)
}

// maxParsedResult bounds the results recordCall decodes for their text: it
// runs on the call's path, before the reply.
const maxParsedResult = 64 << 10

// resultText is a result as a person would read it: a string's text, the
// text parts of MCP-style content, an object's "content"/"result"/"message"
// string, else the JSON itself.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts struct {
		Content []struct{ Type, Text string }
	}
	if json.Unmarshal(raw, &parts) == nil && len(parts.Content) > 0 {
		var texts []string
		for _, p := range parts.Content {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			return strings.Join(texts, "\n")
		}
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
func (n *Node) ObserverStatuses() []controlapi.ObserverStatus { return n.obs.statuses() }

// WatchHub connects to the server's observer channels without a daemon
// (`vcpnode watch` when none runs) and calls each for every event passing
// f, until ctx ends or each fails. The channels are cfg's [observer]
// channels, enabled or not. Its device name is the node's name plus
// "-watch", so the server's replay cache keeps it apart from the daemon.
func WatchHub(ctx context.Context, cfg config.Config, log zerolog.Logger, getenv func(string) string, f controlapi.EventFilter, each func(controlapi.Event) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	key, err := cfg.Key(getenv)
	if err != nil {
		return err
	}
	if _, err := config.HubURL(cfg.Hub.URL, key); err != nil {
		return err
	}
	name := cfg.Hub.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	st := observerSettings{base: cfg.Hub.URL, key: key, device: name + "-watch", hub: cfg.Hub}
	evlog := events.New(cfg.Observer.Buffer)
	obs := newObserverSet(log, evlog, func() observerSettings { return st }, defaultTimings())
	sub, _ := evlog.Subscribe(false, 0)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		obs.run(ctx, cfg.Observer.Channels)
	}()
	defer func() { cancel(); <-done }()
	for {
		evs, dropped, err := sub.Next(ctx, nil)
		if err != nil {
			return nil // ctx ended: the watch is over
		}
		if dropped > 0 {
			if err := each(controlapi.Event{Kind: controlapi.EventDropped, Dropped: dropped, Time: time.Now()}); err != nil {
				return err
			}
		}
		for _, ev := range evs {
			if f.Match(ev) {
				if err := each(ev); err != nil {
					return err
				}
			}
		}
	}
}
