package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/observer"
	"github.com/vcpnode/vcpnode/toolhost"
)

// How the observer side and the event stream hang on the Node.

func (n *Node) initEvents(cfg config.Config) {
	n.events = events.New(cfg.Observer.Buffer)
	opts := observer.Options{Guard: n.guard, AuthFile: n.authWay.File}
	if cfg.Observer.Notify {
		opts.Notify = observer.NewDesktopNotifier(n.log, n.getenv)
	}
	t := observer.Timings{Retry: n.timings.Retry, Jitter: n.timings.Jitter, PerMinute: n.timings.ConnsPerMinute, Burst: n.timings.ConnBurst}
	if n.timings.observerRetry != nil {
		t.Retry = *n.timings.observerRetry
	}
	n.obs = observer.New(n.log, n.events, n.observerSettings, t, opts)
	n.disp.Observe(n.recordCall)
}

func (n *Node) observerSettings() observer.Settings {
	st := n.settings()
	return observer.Settings{Base: st.Config.Hub.URL, Key: st.Key, Device: st.Name, Hub: st.Config.Hub}
}

// runObservers keeps the configured observer connections until ctx ends.
// The mode ([node] mode, [observer] enabled) and channels are read at start; a reload changing them
// takes effect at the next start (the hub settings at the next reconnect).
func (n *Node) runObservers(ctx context.Context) (wait func()) {
	cfg := n.settings().Config
	if n.mode == config.ModeDistributed {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.guard("observers", func() { n.obs.Run(ctx, cfg.Observer.Channels) })
	}()
	return func() { <-done }
}

// approvalChannelFirst runs as a node connection is accepted, before it
// registers the tools. The server broadcasts an approval request once, to
// the VCPlog clients connected at that moment, and keeps no replay state
// across its restarts: in "both" mode the observers are told to reconnect
// now, and the tools are registered only once VCPlog is back (or after
// wait, with a warning), so no call of them can wait on an approval this
// node never heard of.
func (n *Node) approvalChannelFirst(ctx context.Context, cfg config.Config) {
	if n.mode != config.ModeBoth {
		return
	}
	n.obs.Kick()
	if !slices.Contains(cfg.Observer.Channels, "VCPlog") {
		return
	}
	wait := min(cfg.Hub.HandshakeTimeout.D(), cfg.Hub.PingInterval.D())
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := n.obs.WaitConnected(ctx, "VCPlog"); err != nil {
		n.log.Warn().Err(err).Dur("waited", wait).
			Msg("registering the tools before the VCPlog observer is back: approval requests the server sends until it is are missed")
	}
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
					Text: events.ClipText(events.ArgSummary(p.Args), events.MaxText), ApprovalID: p.ID,
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
func (n *Node) ObserverStatuses() []controlapi.ObserverStatus { return n.obs.Statuses() }
