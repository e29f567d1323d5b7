package node

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/config"
)

// EventStreamStart is the first line of every GET /v1/events stream: its ID
// is the last event id the daemon had published when the stream began.
const EventStreamStart = "stream_start"

// EventsQuery selects what GET /v1/events streams.
type EventsQuery struct {
	EventFilter
	// Backlog first sends the buffered events with an id above Since.
	Backlog bool
	Since   uint64
}

func (q EventsQuery) values() url.Values {
	v := url.Values{}
	if q.Source != "" {
		v.Set("source", q.Source)
	}
	if q.Tool != "" {
		v.Set("tool", q.Tool)
	}
	if len(q.Kinds) > 0 {
		v.Set("kind", strings.Join(q.Kinds, ","))
	}
	if q.Backlog {
		v.Set("since", strconv.FormatUint(q.Since, 10))
	}
	return v
}

func parseEventsQuery(v url.Values) (EventsQuery, error) {
	var q EventsQuery
	q.Source, q.Tool = v.Get("source"), v.Get("tool")
	if q.Source != "" && q.Source != EventSourceNode && q.Source != EventSourceServer {
		return q, fmt.Errorf("source must be %q or %q, not %q", EventSourceNode, EventSourceServer, q.Source)
	}
	if k := v.Get("kind"); k != "" {
		q.Kinds = strings.Split(k, ",")
	}
	if s := v.Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, fmt.Errorf("since must be an event id (a number), not %q", s)
		}
		q.Backlog, q.Since = true, n
	}
	return q, nil
}

// handleEvents streams events as JSON lines (application/x-ndjson) until
// the client goes away or the daemon stops. A subscriber that reads too
// slowly loses the oldest events; a "dropped" line says how many.
func (s *ControlServer) handleEvents(w http.ResponseWriter, r *http.Request) {
	q, err := parseEventsQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("this connection cannot stream"))
		return
	}
	sub := s.n.events.subscribe(q.Backlog, q.Since)
	defer s.n.events.unsubscribe(sub)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	emit := func(ev Event) bool {
		buf.Reset()
		if enc.Encode(ev) != nil {
			return true
		}
		_, err := io.WriteString(w, config.Redact(buf.String()))
		return err == nil
	}
	s.n.events.mu.Lock()
	last := s.n.events.nextID - 1
	s.n.events.mu.Unlock()
	if !emit(Event{ID: last, Kind: EventStreamStart, Time: time.Now()}) {
		return
	}
	flusher.Flush()
	for {
		evs, dropped, err := sub.next(r.Context(), s.closing)
		if err != nil {
			return
		}
		if dropped > 0 && !emit(Event{Kind: EventDropped, Dropped: dropped, Time: time.Now(), Text: fmt.Sprintf("%d events dropped: this reader was too slow", dropped)}) {
			return
		}
		for _, ev := range evs {
			if q.Match(ev) && !emit(ev) {
				return
			}
		}
		flusher.Flush()
	}
}

// Events streams GET /v1/events, calling each for every line until ctx
// ends, the daemon closes the stream (io.EOF) or each fails.
func (c *ControlClient) Events(ctx context.Context, q EventsQuery, each func(Event) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://vcpnode"+pathEvents+"?"+q.values().Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*config.KiB), 4*config.MiB)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("read the event stream of vcpnode at %s: %w", c.socket, err)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read the event stream of vcpnode at %s: %w", c.socket, err)
	}
	return io.EOF
}
