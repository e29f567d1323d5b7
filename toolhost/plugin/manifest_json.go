package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"
)

// Typed reads of manifest fields. Each returns (value, present, error);
// JSON null counts as absent, a wrong type is an error that says what was
// expected and what was found.

// maxTimeoutMillis is the largest timer the server's setTimeout honours.
const maxTimeoutMillis = math.MaxInt32

func objectOf(data []byte) (fields, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		if len(d) == 0 {
			return nil, errors.New("empty")
		}
		return nil, fmt.Errorf("want an object, got %s", clip(d))
	}
	var f fields
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	return f, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func (f fields) str(key string) (string, bool, error) {
	v, ok := f[key]
	if !ok || isNull(v) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, fmt.Errorf("must be a string, got %s", clip(v))
	}
	return s, true, nil
}

func (f fields) object(key string) (fields, bool, error) {
	v, ok := f[key]
	if !ok || isNull(v) {
		return nil, false, nil
	}
	obj, err := objectOf(v)
	if err != nil {
		return nil, false, fmt.Errorf("must be an object, got %s", clip(v))
	}
	return obj, true, nil
}

func (f fields) array(key string) ([]json.RawMessage, bool, error) {
	v, ok := f[key]
	if !ok || isNull(v) {
		return nil, false, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, false, fmt.Errorf("must be an array, got %s", clip(v))
	}
	return list, true, nil
}

// millis reads a timeout in milliseconds. Zero means "not set", as the
// official hosts' `timeout || default` does.
func (f fields) millis(key string) (time.Duration, error) {
	v, ok := f[key]
	if !ok || isNull(v) {
		return 0, nil
	}
	var ms float64
	if err := json.Unmarshal(v, &ms); err != nil {
		return 0, fmt.Errorf("must be a number of milliseconds, got %s", clip(v))
	}
	switch {
	case ms < 0:
		return 0, fmt.Errorf("must not be negative, got %s", clip(v))
	case ms > maxTimeoutMillis:
		return 0, fmt.Errorf("%s ms is longer than the server's timer allows (%d ms, about 24 days)", clip(v), maxTimeoutMillis)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

func sortedKeys(f fields) []string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// clip shows a JSON value in an error, shortened.
func clip(v []byte) string {
	const max = 40
	v = bytes.TrimSpace(v)
	if len(v) <= max {
		return string(v)
	}
	n := max
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return string(v[:n]) + "…"
}

// describeJSONError adds the line and column to a syntax error.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset <= 0 || se.Offset > int64(len(data)) {
		return err.Error()
	}
	before := data[:se.Offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := se.Offset - int64(bytes.LastIndexByte(before, '\n'))
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}
