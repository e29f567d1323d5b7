package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Reading a plugin's answer. The
// official hosts need stdout to be exactly one JSON document (or match a
// lazy regex); here stray log lines and pretty-printing are fine.

// ReportedError is a plugin's own {"status":"error"} answer. Error returns
// the plugin's text unchanged: a JSON object text reaches the server as it
// is, which turns it into the error object the model sees.
type ReportedError struct {
	Plugin string
	Text   string
}

func (e *ReportedError) Error() string { return e.Text }

// ErrOutputTooLarge: a run printed more than Options.MaxOutputBytes on
// stdout and no JSON status was found at its end.
var ErrOutputTooLarge = errors.New("output exceeds max_output_bytes")

// outputTailBytes is how much of the end of an over-long output is kept to
// look for a final JSON status (a plugin that logs a lot, then answers).
const outputTailBytes = 64 << 10

// maxIncompleteRestarts bounds the scan for a last JSON object in output
// full of unterminated objects, which would otherwise cost quadratic time.
const maxIncompleteRestarts = 64

// isAnswer reports whether raw is an object with status "success" or
// "error", the shape both official hosts wait for while a run streams.
func isAnswer(raw []byte) bool {
	s, ok := statusOf(raw)
	return ok && (s == "success" || s == "error")
}

// hasStatus reports whether raw is an object with a non-empty string
// status: once a run has ended, any such object is its answer, and every
// status but "success" is a failure (as both official hosts read it).
func hasStatus(raw []byte) bool {
	s, ok := statusOf(raw)
	return ok && s != ""
}

func statusOf(raw []byte) (string, bool) {
	var s struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s.Status, true
}

// findAnswer picks the answer out of a finished run's stdout: the whole
// output when it is one JSON object (with or without a status), else the
// last complete object with a status in it, else nil.
func findAnswer(out []byte) json.RawMessage {
	if t := bytes.TrimSpace(out); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	var last json.RawMessage
	restarts := 0
	for pos := 0; pos < len(out); {
		i := bytes.IndexByte(out[pos:], '{')
		if i < 0 {
			break
		}
		start := pos + i
		dec := json.NewDecoder(bytes.NewReader(out[start:]))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		switch {
		case err == nil:
			if hasStatus(raw) {
				last = raw
			}
			pos = start + int(dec.InputOffset())
		case errors.Is(err, io.ErrUnexpectedEOF):
			if restarts++; restarts > maxIncompleteRestarts {
				return last
			}
			pos = start + 1
		default:
			pos = start + 1
		}
	}
	return last
}

// recorder reads from r into c, so bytes a decoder consumed can be scanned
// again after a false start.
type recorder struct {
	r   io.Reader
	c   *capture
	err error // the first error from r
}

// errCaptureFull: the scan gave up at the output cap.
var errCaptureFull = errors.New("output cap reached before an answer")

func (rr *recorder) Read(p []byte) (int, error) {
	if rr.err != nil {
		return 0, rr.err
	}
	c := rr.c
	room := c.max - len(c.buf)
	if room <= 0 {
		return 0, errCaptureFull
	}
	p = p[:min(len(p), room)]
	n, err := rr.r.Read(p)
	if len(c.buf)+n > cap(c.buf) { // grow by doubling up to the cap: append's 1.25× would allocate ~5× the cap
		grown := make([]byte, len(c.buf), min(max(2*cap(c.buf), len(c.buf)+n, 4096), c.max))
		copy(grown, c.buf)
		c.buf = grown
	}
	c.buf = append(c.buf, p[:n]...)
	c.total += int64(n)
	if err != nil {
		rr.err = err
	}
	return n, err
}

// scanAnswer reads r until the first answer object (see isAnswer),
// skipping log text and other objects, with a streaming decoder so
// pretty-printed JSON works. Everything read is kept in c (up to c.max).
// It returns the error that ended the stream (io.EOF…) when there was no answer.
func scanAnswer(r io.Reader, c *capture) (json.RawMessage, error) {
	rr := &recorder{r: r, c: c}
	chunk := make([]byte, 4096)
	pos := 0
	for {
		i := bytes.IndexByte(c.buf[pos:], '{')
		if i < 0 {
			pos = len(c.buf)
			if _, err := rr.Read(chunk); err != nil {
				return nil, err
			}
			continue
		}
		start := pos + i
		dec := json.NewDecoder(io.MultiReader(bytes.NewReader(c.buf[start:]), rr))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		switch {
		case err == nil:
			if isAnswer(raw) {
				return raw, nil
			}
			pos = start + int(dec.InputOffset())
		case rr.err != nil:
			return nil, rr.err
		case errors.Is(err, errCaptureFull):
			return nil, err
		default: // not JSON from here
			pos = start + 1
		}
	}
}

// answerResult turns an answer object into Invoke's return values. The
// status is trusted whatever the exit code (as VCPToolBox does). Any status
// other than "success" ("failed", "ok"…) is the plugin's own error: the
// official node fails every one, and VCPToolBox accepts no other.
func answerResult(plugin string, raw json.RawMessage) (any, error) {
	f, err := objectOf(raw)
	if err != nil {
		return nil, fmt.Errorf("plugin %q answered with JSON that is not an object: %w", plugin, err)
	}
	status, _, _ := f.str("status")
	switch status {
	case "success":
		return successResult(f)
	case "": // no status: the object is the result
		return raw, nil
	default:
		return nil, &ReportedError{Plugin: plugin, Text: reportedErrorText(plugin, status, f)}
	}
}

func reportedErrorText(plugin, status string, f fields) string {
	for _, key := range []string{"error", "message"} {
		v, ok := f[key]
		if !ok || isNull(v) {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			if strings.TrimSpace(s) != "" {
				return s
			}
			continue
		}
		return compactJSON(v) // an object stays JSON, which the server parses
	}
	if status != "error" {
		return fmt.Sprintf("plugin %q answered status %q without a message", plugin, status)
	}
	return fmt.Sprintf("plugin %q reported an error without a message", plugin)
}

// passThrough are top-level answer fields kept inside the result: DS's
// _specialAction with its payload, and messageForAI.
var passThrough = []string{"_specialAction", "payload", "messageForAI"}

// successResult returns result: an object as it is, a string as a text
// part; the pass-through fields are added when the result lacks them, and
// messageForAI also becomes a text part after a string result, so the
// model reads it.
func successResult(f fields) (any, error) {
	res, has := f["result"]
	if !has || isNull(res) {
		res = nil
	}
	extras := make(fields)
	for _, k := range passThrough {
		if v, ok := f[k]; ok && !isNull(v) {
			extras[k] = v
		}
	}
	if obj, err := objectOf(res); res != nil && err == nil {
		if len(extras) == 0 {
			return json.RawMessage(bytes.TrimSpace(res)), nil
		}
		for k, v := range extras {
			if _, taken := obj[k]; !taken {
				obj[k] = v
			}
		}
		return obj, nil
	}
	var parts []toolhost.ContentPart
	var s string
	switch {
	case res == nil:
	case json.Unmarshal(res, &s) == nil:
		parts = append(parts, toolhost.ContentPart{Type: "text", Text: s})
	default: // a number, a boolean or an array: shown as its JSON text
		parts = append(parts, toolhost.ContentPart{Type: "text", Text: compactJSON(res)})
	}
	var forAI string
	if v, ok := extras["messageForAI"]; ok && json.Unmarshal(v, &forAI) == nil && forAI != "" {
		parts = append(parts, toolhost.ContentPart{Type: "text", Text: forAI})
	}
	switch {
	case len(extras) == 0 && len(parts) == 0:
		return nil, nil // the dispatcher says the tool finished with no output
	case len(extras) == 0:
		return toolhost.ContentResult{Content: parts}, nil
	}
	out := make(map[string]any, len(extras)+1)
	for k, v := range extras {
		out[k] = v
	}
	if len(parts) > 0 {
		out["content"] = parts
	}
	return out, nil
}

// rawTextResult is the result of output with no JSON answer and a zero exit.
func rawTextResult(c *capture) any {
	text := strings.TrimSpace(strings.ToValidUTF8(string(c.buf), "\uFFFD"))
	if text == "" {
		return nil
	}
	return toolhost.TextResult(text)
}

// truncatedResult reads a run whose stdout went past the cap. Its output is
// never the result (the model would get megabytes of noise, and the answer
// would be lost): a JSON status at the very end (in the kept tail) is
// honoured, anything else is ErrOutputTooLarge with the sizes.
func truncatedResult(p *process, out *capture) (any, error) {
	tail := out.tailBytes()
	if raw := findAnswer(tail); raw != nil && hasStatus(raw) {
		return answerResult(p.spec.name, raw)
	}
	return nil, fmt.Errorf("plugin %q %w: printed %d bytes, the cap is %d, and its last %d bytes hold no JSON status (%s)",
		p.spec.name, ErrOutputTooLarge, out.total, out.max, len(tail), p.exitText())
}

// failureError is the error for a non-zero exit without a JSON answer: it
// quotes the summary of stderr (or of stdout when stderr says nothing).
func failureError(p *process, stdout []byte) error {
	q, from := p.errOut.summary(), "stderr"
	if q == "" {
		q, from = toolhost.SummarizeStderr(stdout), "stdout"
	}
	if q == "" {
		return fmt.Errorf("plugin %q %w (%s) with no output", p.spec.name, ErrFailed, p.exitText())
	}
	return fmt.Errorf("plugin %q %w (%s) without a JSON answer; %s: %s", p.spec.name, ErrFailed, p.exitText(), from, q)
}

func compactJSON(v []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(bytes.TrimSpace(v))
	}
	return buf.String()
}

// DirectResult maps what a direct plugin's processToolCall returned (its
// JSON; empty for undefined) the way stdio answers are mapped: an object
// with a status is an answer, another object is the result as it is, a
// string is text for the model, other values are shown as their JSON text.
// A success answer with fields besides status and result (outputPath,
// fileName, _specialAction…) is the result as it is: both official hosts
// hand a direct plugin's object to the server whole, and the server
// decides what the model sees.
func DirectResult(plugin string, raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		if f, err := objectOf(raw); err == nil && hasOtherFields(f) {
			if status, _, _ := f.str("status"); status == "success" {
				return raw, nil
			}
		}
		return answerResult(plugin, raw)
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("plugin %q returned a string that does not parse: %w", plugin, err)
		}
		return toolhost.TextResult(s), nil
	}
	return toolhost.TextResult(compactJSON(raw)), nil
}

// hasOtherFields reports whether an answer carries fields besides status and result.
func hasOtherFields(f fields) bool {
	for k := range f {
		if k != "status" && k != "result" {
			return true
		}
	}
	return false
}
