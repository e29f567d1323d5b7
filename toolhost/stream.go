package toolhost

import (
	"bytes"
	"fmt"
	"io"
)

// StreamResult is a successful result written straight to the connection
// instead of being held whole in memory: internal_request_file's base64, for
// one. The session writes it inside the tool_result frame as it goes.
type StreamResult interface {
	// MaxBytes bounds the JSON that WriteJSON writes; the size checks made
	// before writing (max_result_bytes, the server's frame limit) use it.
	MaxBytes() int64
	// WriteJSON writes the result, one JSON value, to w and releases what
	// the result holds. An error means w may hold a partial value: the
	// frame it was part of must be abandoned.
	WriteJSON(w io.Writer) error
	// Close releases the result without writing it; safe after WriteJSON.
	Close() error
}

// streamOutcome turns a StreamResult into the outcome: the result itself
// when the caller writes streams (the hub session), else the JSON gathered
// in memory (`vcpnode call` and other local callers).
func streamOutcome(c *call, s StreamResult) (Outcome, error) {
	if c.maxBytes > 0 && s.MaxBytes() > int64(c.maxBytes) {
		s.Close()
		return Outcome{}, fmt.Errorf("result of up to %d bytes %w (%d)", s.MaxBytes(), ErrResultTooLarge, c.maxBytes)
	}
	if c.Streams {
		return Outcome{RequestID: c.RequestID, Stream: s}, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(s.MaxBytes()))
	if err := s.WriteJSON(&buf); err != nil {
		s.Close()
		return Outcome{}, err
	}
	return Outcome{RequestID: c.RequestID, Result: buf.Bytes()}, nil
}
