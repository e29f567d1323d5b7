package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/observer"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// watchRetry is the wait between attempts to reach a daemon that went away.
const watchRetry = 500 * time.Millisecond

func newWatchCmd(a *app) *cobra.Command {
	var f controlFlags
	var serverOnly, nodeOnly bool
	var filter controlapi.EventFilter
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Show tool calls as they happen: the server's and this node's, one line each",
		Long: "watch prints the daemon's event stream live: every call this node runs (start and\n" +
			"end, status, duration, approval) and, with [observer] enabled, what the server\n" +
			"broadcasts: every tool result of any node, its approval requests, plugins' status.\n" +
			"One line per event (time, source, what, tool, status, duration, first line of the\n" +
			"result); --json prints the events as JSON lines. It reconnects when the daemon\n" +
			"restarts. With no daemon for the config it connects to the server's observer\n" +
			"channels itself, with the config's hub settings, and says so.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serverOnly && nodeOnly {
				return usageErrorf("--server-only and --node-only exclude each other")
			}
			switch {
			case serverOnly:
				filter.Source = controlapi.EventSourceServer
			case nodeOnly:
				filter.Source = controlapi.EventSourceNode
			}
			return a.watch(cmd, &f, filter)
		},
	}
	f.add(cmd, true)
	cmd.Flags().BoolVar(&serverOnly, "server-only", false, "only what the server broadcasts")
	cmd.Flags().BoolVar(&nodeOnly, "node-only", false, "only this node's own calls")
	cmd.Flags().StringVar(&filter.Tool, "tool", "", "only events of the tool `NAME`")
	return cmd
}

func (a *app) watch(cmd *cobra.Command, f *controlFlags, filter controlapi.EventFilter) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	sock, err := a.controlSocket(f)
	if err != nil {
		return err
	}
	p := newEventPrinter(a.stdout, f.json)
	connected, lost := false, false
	for {
		c := controlapi.NewControlClient(sock)
		err := c.Events(ctx, controlapi.EventsQuery{EventFilter: filter}, func(ev controlapi.Event) error {
			if ev.Kind == controlapi.EventStreamStart {
				switch {
				case !connected:
					fmt.Fprintf(a.stderr, "watching the daemon at %s (Ctrl-C to stop)\n", sock)
				case lost:
					fmt.Fprintln(a.stderr, "reconnected to the daemon")
				}
				connected, lost = true, false
				return nil
			}
			return p.print(ev)
		})
		c.Close()
		if ctx.Err() != nil {
			return nil
		}
		var apiErr *controlapi.APIError
		switch {
		case !connected && errors.Is(err, controlapi.ErrNotRunning):
			return a.watchHub(ctx, sock, f, filter, p)
		case errors.As(err, &apiErr):
			return err
		case !lost && connected:
			lost = true
			fmt.Fprintln(a.stderr, "lost the daemon; reconnecting when it is back")
		case !connected:
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchRetry):
		}
	}
}

// watchHub is watch without a daemon: the server's observer channels, directly.
func (a *app) watchHub(ctx context.Context, sock string, f *controlFlags, filter controlapi.EventFilter, p *eventPrinter) error {
	path := a.findConfig(f.config)
	if path == "" {
		return fmt.Errorf("no daemon answers at %s, and there is no config file to find the server with (pass --config FILE)", sock)
	}
	cfg, err := config.Load(path, toolconfig.Check)
	if err != nil {
		return err
	}
	if filter.Source == controlapi.EventSourceNode {
		return fmt.Errorf("no daemon answers at %s: there are no node calls to watch (--node-only)", sock)
	}
	logCfg := cfg.Log
	if a.logLevel == "" {
		logCfg.Level = "warn" // the events are the output; connection chatter is not
	}
	log, err := a.logger(logCfg)
	if err != nil {
		return err
	}
	hub := "(invalid URL)"
	if u, err := config.ObserverURL(cfg.Hub.URL, "x", config.ObserverChannels[0], ""); err == nil {
		hub = u.Scheme + "://" + u.Host
	}
	fmt.Fprintf(a.stderr, "no daemon answers at %s: watching the server's observer channels (%s) at %s directly, with the hub settings of %s; this node's own calls are not shown\n",
		sock, strings.Join(cfg.Observer.Channels, ", "), hub, path)
	return observer.Watch(ctx, cfg, log, a.getenv, filter, p.print)
}

// eventPrinter writes events as lines for people, or as JSON lines.
type eventPrinter struct {
	w      io.Writer
	json   bool
	colour bool
}

func newEventPrinter(w io.Writer, asJSON bool) *eventPrinter {
	return &eventPrinter{w: w, json: asJSON, colour: !asJSON && isTerminal(w) && os.Getenv("NO_COLOR") == ""}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	ansiReset  = "\x1b[0m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiPurple = "\x1b[35m"
)

func (p *eventPrinter) paint(colour, s string) string {
	if !p.colour || s == "" {
		return s
	}
	return colour + s + ansiReset
}

func (p *eventPrinter) print(ev controlapi.Event) error {
	if p.json {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "%s\n", data)
		return err
	}
	_, err := fmt.Fprintln(p.w, p.line(ev))
	return err
}

// eventWords names each kind in a watch line.
var eventWords = map[string]string{
	controlapi.EventCallStart:        "start",
	controlapi.EventCallEnd:          "end",
	controlapi.EventToolLog:          "result",
	controlapi.EventApprovalRequest:  "approval?",
	controlapi.EventApprovalAnswered: "answered",
	controlapi.EventApprovalExpired:  "expired",
	controlapi.EventDropped:          "dropped",
}

// line is one event as `vcpnode watch` shows it: time, source, what, tool,
// status and duration, first line of the text.
func (p *eventPrinter) line(ev controlapi.Event) string {
	what := eventWords[ev.Kind]
	if what == "" {
		what = ev.Type
	}
	if what == "" {
		what = ev.Kind
	}
	source := ev.Source
	switch source {
	case controlapi.EventSourceServer:
		source = p.paint(ansiCyan, fmt.Sprintf("%-6s", source))
	case controlapi.EventSourceNode:
		source = p.paint(ansiPurple, fmt.Sprintf("%-6s", source))
	default:
		source = fmt.Sprintf("%-6s", "-")
	}
	status := ev.Status
	if ev.Approval != "" && ev.Kind == controlapi.EventApprovalAnswered {
		status = ev.Approval
	}
	if ev.DurationMs != nil {
		status = strings.TrimSpace(status + " " + ctlAge(time.Duration(*ev.DurationMs)*time.Millisecond))
	}
	if ev.Kind == controlapi.EventCallEnd && ev.Approval != "" && ev.Approval != "auto" {
		status += " (" + ev.Approval + ")"
	}
	text := firstLine(ev.Text)
	switch ev.Kind {
	case controlapi.EventApprovalRequest:
		by := ""
		if ev.Maid != "" {
			by = " by " + ev.Maid
		}
		id := ev.ApprovalID
		if id == "" {
			id = ev.RequestID
		}
		text = fmt.Sprintf("asked%s: %s (vcpnode approve %s)", by, ctlClip(text, 60), id)
	case controlapi.EventDropped:
		text = fmt.Sprintf("%d events dropped: this watch read too slowly", ev.Dropped)
	}
	tool := ev.Tool
	if tool == "" {
		tool = "-"
	}
	return fmt.Sprintf("%s %s %-9s %-18s %-14s %s",
		p.paint(ansiDim, ev.Time.Local().Format(time.TimeOnly)), source, what, tool, p.paintStatus(status), ctlClip(text, 100))
}

func (p *eventPrinter) paintStatus(s string) string {
	if s == "" {
		s = "-"
	}
	padded := fmt.Sprintf("%-14s", s)
	word, _, _ := strings.Cut(s, " ")
	switch word {
	case "ok", "success", "approved":
		return p.paint(ansiGreen, padded)
	case "-":
		return padded
	case "denied", "expired", "timeout", "error", "failed", "busy", "refused":
		return p.paint(ansiRed, padded)
	}
	return p.paint(ansiYellow, padded)
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
