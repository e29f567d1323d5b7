package control

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// progressBuffer bounds the progress events waiting for a slow reader;
// past it, events are dropped, never the call's answer.
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
	ctx := controlapi.WithProgress(r.Context(), func(p controlapi.CallProgress) {
		select {
		case events <- p:
		default:
		}
	})
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
		case a := <-done:
			for len(events) > 0 {
				p := <-events
				emit(controlapi.CallStreamLine{Progress: &p})
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
