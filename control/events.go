package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// handleEvents streams events as JSON lines (application/x-ndjson) until
// the client goes away or the daemon stops. A subscriber that reads too
// slowly loses the oldest events; a "dropped" line says how many.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	q, err := controlapi.ParseEventsQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("this connection cannot stream"))
		return
	}
	last, next, cancel := s.b.SubscribeEvents(q.Backlog, q.Since)
	defer cancel()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	emit := func(ev controlapi.Event) bool {
		buf.Reset()
		if enc.Encode(ev) != nil {
			return true
		}
		_, err := io.WriteString(w, config.Redact(buf.String()))
		return err == nil
	}
	if !emit(controlapi.Event{ID: last, Kind: controlapi.EventStreamStart, Time: time.Now()}) {
		return
	}
	flusher.Flush()
	for {
		evs, dropped, err := next(r.Context(), s.closing)
		if err != nil {
			return
		}
		if dropped > 0 && !emit(controlapi.Event{Kind: controlapi.EventDropped, Dropped: dropped, Time: time.Now(), Text: fmt.Sprintf("%d events dropped: this reader was too slow", dropped)}) {
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
