package wsproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Sentinel errors wrapped by DecodeError and by Encode's errors, for
// errors.Is. The error text carries the details (which field, which kind).
var (
	// ErrNotJSON means a frame, or a raw value given to Encode, is not valid JSON.
	ErrNotJSON = errors.New("not valid JSON")
	// ErrNotObject means a frame or its "data" is valid JSON but not an object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrMissingField means a required field is absent, null or empty.
	ErrMissingField = errors.New("missing field")
	// ErrWrongType means a field holds the wrong kind of JSON value.
	ErrWrongType = errors.New("wrong field type")
	// ErrInvalidValue means a field has the right kind but a value the
	// protocol does not allow (e.g. a tool_result status other than
	// "success" or "error").
	ErrInvalidValue = errors.New("invalid field value")
	// ErrNotEncodable means Encode was given something it cannot send: an
	// Unknown frame, a nil message or a type outside this package.
	ErrNotEncodable = errors.New("message cannot be encoded")
)

// DecodeError is the only error type Decode returns.
type DecodeError struct {
	// Type is the frame's type, or "" when the frame has none (not JSON,
	// not an object, missing or non-string type).
	Type Type
	// RequestID is data.requestId whenever the frame carries it as a
	// string, even if the frame is otherwise malformed, so that the node can
	// still answer a broken execute_tool with an error tool_result.
	RequestID string
	// Err says what was wrong; it wraps one of the sentinel errors above.
	Err error
}

func (e *DecodeError) Error() string {
	if e.Type == "" {
		return "decode: " + e.Err.Error()
	}
	return "decode " + truncate(string(e.Type)) + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// fieldError says what is wrong with one field. Its text is
// "<field>: <detail>", e.g. `toolName: missing`; it unwraps to a sentinel.
type fieldError struct {
	field  string
	detail string
	kind   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.detail }
func (e *fieldError) Unwrap() error { return e.kind }

func missing(field string) error {
	return &fieldError{field: field, detail: "missing", kind: ErrMissingField}
}

func notObject(field, got string) error {
	return &fieldError{field: field, detail: "want object, got " + got, kind: ErrNotObject}
}

func wrongType(field, want, got string) error {
	return &fieldError{field: field, detail: "want " + want + ", got " + got, kind: ErrWrongType}
}

func invalidValue(field, detail string) error {
	return &fieldError{field: field, detail: detail, kind: ErrInvalidValue}
}

// notJSON wraps ErrNotJSON together with the parser's own error, keeping
// both reachable through errors.Is / errors.As.
func notJSON(what string, cause error) error {
	var syn *json.SyntaxError
	if errors.As(cause, &syn) {
		return fmt.Errorf("%s: %w: %w (at byte %d)", what, ErrNotJSON, cause, syn.Offset)
	}
	return fmt.Errorf("%s: %w: %w", what, ErrNotJSON, cause)
}

// maxQuoted bounds every value echoed in an error: frames can be many
// megabytes and errors end up in logs and in tool results.
const maxQuoted = 64

// truncate shortens s to at most maxQuoted bytes on a rune boundary,
// marking the cut with "…".
func truncate(s string) string {
	if cut := cutPoint(s); cut < len(s) {
		return s[:cut] + "…"
	}
	return s
}

// quote returns s Go-quoted for an error message, truncated like truncate.
func quote(s string) string {
	if cut := cutPoint(s); cut < len(s) {
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func cutPoint(s string) int {
	if len(s) <= maxQuoted {
		return len(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}

// kindOf names the kind of the JSON value starting at raw[0], as used in
// "want X, got Y" messages. raw must be valid JSON without leading space.
func kindOf(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
