package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// progressBuffer bounds the progress events waiting for a slow reader;
// past it, events are dropped, never the call's answer, and counted: once
// the reader has caught up, and before the answer, a ProgressDropped line
// says how many, so the last progress line a lagging reader sees is the
// count. Dropping keeps the call's answer from ever waiting on a reader,
// and the server's events are kept as it sent them, not merged.
const progressBuffer = 256

// callStreaming answers a call made with progress: a JSON line per
// progress event as it comes, then the response (controlapi.CallStreamLine).
// Until the first event the answer is not started, so an error found
// before it (an unknown tool) is a plain error answer. Progress arrives
// on the connection's reader: it is handed over, never written there.
func (s *Server) callStreaming(w http.ResponseWriter, r *http.Request, req controlapi.CallRequest) {
	flusher, _ := w.(http.Flusher)
	started := false
	emit := func(line controlapi.CallStreamLine) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(line) != nil {
			return
		}
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
		}
		_, _ = io.WriteString(w, config.Redact(buf.String())) // the client may be gone; the call ends with its context
		if flusher != nil {
			flusher.Flush()
		}
	}
	events := make(chan controlapi.CallProgress, progressBuffer)
	var dropped atomic.Int64 // since the last ProgressDropped line
	ctx := controlapi.WithProgress(r.Context(), func(p controlapi.CallProgress) {
		select {
		case events <- p:
		default:
			dropped.Add(1)
		}
	})
	droppedAll := 0
	noteDropped := func() {
		if n := int(dropped.Swap(0)); n > 0 {
			droppedAll += n
			emit(controlapi.CallStreamLine{Progress: &controlapi.CallProgress{Kind: controlapi.ProgressDropped, Dropped: n,
				Message: fmt.Sprintf("%d progress updates dropped: they came faster than they were read", n)}})
		}
	}
	type answer struct {
		out controlapi.CallResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := s.b.Call(ctx, req)
		done <- answer{out, err}
	}()
	for {
		select {
		case p := <-events:
			emit(controlapi.CallStreamLine{Progress: &p})
			if len(events) == 0 {
				noteDropped()
			}
		case a := <-done:
			for len(events) > 0 {
				p := <-events
				emit(controlapi.CallStreamLine{Progress: &p})
			}
			noteDropped()
			if droppedAll > 0 {
				s.opts.Log.Warn().Str("tool", req.Tool).Int("dropped", droppedAll).
					Msg("progress events of a call were dropped: the caller read them slower than they came")
			}
			switch {
			case a.err != nil && !started:
				writeBackendError(w, http.StatusInternalServerError, a.err)
			case a.err != nil:
				emit(controlapi.CallStreamLine{Error: config.Redact(a.err.Error())})
			default:
				emit(controlapi.CallStreamLine{Response: &a.out})
			}
			return
		}
	}
}
