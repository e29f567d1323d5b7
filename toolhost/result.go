package toolhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// Outcome is the answer to one call, for a tool_result.
type Outcome struct {
	RequestID string
	// Result is the marshalled result of a successful call.
	Result json.RawMessage
	// Stream, instead of Result, is a success to be written out by the
	// caller (only for calls with Call.Streams); it must be written or
	// closed.
	Stream StreamResult
	// Err is non-empty for an error result: the text the server (and the
	// model) will see. It is never a bare JSON scalar (protocol.md §5 item 7).
	Err string
	// Cause is the error behind Err, for callers that branch on it with
	// errors.Is (ErrUnknownTool, ErrBusy, ErrTimeout…) or show it locally.
	// It is nil on success.
	Cause error
}

// ResultBytes is the size of a success: of Result, or at most that of Stream.
func (o Outcome) ResultBytes() int {
	if o.Stream != nil {
		return int(o.Stream.MaxBytes())
	}
	return len(o.Result)
}

// OK reports whether the outcome is a success.
func (o Outcome) OK() bool { return o.Err == "" }

// ContentPart is one OpenAI-style part of a "content" array, the shape the
// server hands to the model as it is (protocol.md §5 item 5).
type ContentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is the image of an "image_url" part: a data: URL or an http(s) URL.
type ImageURL struct {
	URL string `json:"url"`
}

// ContentResult is a result made only of content parts.
type ContentResult struct {
	Content []ContentPart `json:"content"`
}

// TextResult is the result shape for text meant for the model.
func TextResult(text string) ContentResult {
	return ContentResult{Content: []ContentPart{{Type: "text", Text: text}}}
}

// ErrResultTooLarge: the marshalled result is bigger than Limits.MaxResultBytes.
var ErrResultTooLarge = errors.New("exceeds max_result_bytes")

// ErrBadResult: the tool returned a value that cannot be sent as JSON.
var ErrBadResult = errors.New("tool returned a result that is not valid JSON")

// encodeResult turns what Invoke returned into the tool_result's result:
//   - a string becomes {"content":[{"type":"text","text":…}]}, so the model
//     reads text rather than a JSON-quoted string;
//   - json.RawMessage is sent as it is, after a validity check;
//   - nil (or anything that marshals to null) becomes a text part saying the
//     tool finished with no output, so the model is not left with an empty
//     answer or the server's {"original_plugin_output": null};
//   - anything else is marshalled with encoding/json.
//
// A result above maxBytes (when positive) is refused with ErrResultTooLarge,
// or, with oversize OversizeTruncate and a result of content parts, cut to
// fit (truncateResult).
func encodeResult(tool string, v any, maxBytes int, oversize string) (json.RawMessage, error) {
	var (
		b   []byte
		err error
	)
	switch r := v.(type) {
	case nil:
	case string:
		b, err = marshalJSON(TextResult(r))
	case json.RawMessage:
		b, err = checkRaw(r)
	default:
		b, err = marshalJSON(r)
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrBadResult, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || string(b) == "null" {
		b, err = marshalJSON(TextResult(fmt.Sprintf("tool %q finished with no output", tool)))
		if err != nil {
			return nil, err
		}
	}
	if maxBytes > 0 && len(b) > maxBytes {
		if oversize != OversizeError {
			if cut, ok := truncateResult(tool, b, maxBytes); ok {
				return cut, nil
			}
		}
		return nil, fmt.Errorf("result of %d bytes %w (%d)", len(b), ErrResultTooLarge, maxBytes)
	}
	return b, nil
}

// checkRaw trims raw output and checks that it is JSON; empty stays empty.
func checkRaw(r json.RawMessage) ([]byte, error) {
	trimmed := bytes.TrimSpace(r)
	if len(trimmed) > 0 && !json.Valid(trimmed) {
		return nil, fmt.Errorf("%w: %d bytes of raw output that do not parse", ErrBadResult, len(trimmed))
	}
	return trimmed, nil
}

// marshalJSON is json.Marshal without HTML escaping: "<", ">" and "&" stay
// as they are (tool texts and examples are full of "<<<[TOOL_REQUEST]>>>"),
// which keeps results smaller and manifests readable in the server's admin.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errorText makes err's text safe to send as a tool_result error: never
// empty, never longer than maxBytes (when positive), and never a bare JSON
// scalar or array, which the server would JSON.parse and then crash on while
// adding fields to it. A JSON object passes through: the server parses it
// into the error object the model sees.
func errorText(msg string, maxBytes int) string {
	msg = strings.TrimSpace(strings.ToValidUTF8(msg, "\uFFFD"))
	if msg == "" {
		return "tool failed without an error message"
	}
	if json.Valid([]byte(msg)) && msg[0] != '{' {
		msg = "tool error: " + msg
	}
	if maxBytes > 0 && len(msg) > maxBytes {
		msg = humantext.Truncate(msg, maxBytes-len(truncatedMark)) + truncatedMark
	}
	return msg
}

const truncatedMark = " …(truncated)"
