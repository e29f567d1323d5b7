package wsproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzDecode checks, for any frame: Decode does not panic or modify its
// input; its errors are short *DecodeErrors wrapping a sentinel; an Unknown
// frame cannot be encoded; and any known message Decode accepts, whichever
// side sends it, encodes to valid UTF-8 JSON that decodes to an equal
// message and re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		frame, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"type":7}`,
		`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":[]}}`,
		`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","_vcpContext":null}}`,
		`{"type":"tool_result","data":{"requestId":"r","status":"error","error":""}}`,
		`{"type":"update_static_placeholders","data":{"placeholders":{"a":null}}}`,
		`{"type":"report_ip","data":{"localIPs":[null]}}`,
		"{\"type\":\"tool_result\",\"data\":{\"requestId\":\"r\",\"status\":\"success\",\"result\":\"\xff\\ud800\"}}",
	} {
		f.Add([]byte(s))
	}
	sentinels := []error{ErrNotJSON, ErrNotObject, ErrMissingField, ErrWrongType, ErrInvalidValue}

	f.Fuzz(func(t *testing.T, frame []byte) {
		input := bytes.Clone(frame)
		m, err := Decode(frame)
		if !bytes.Equal(input, frame) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is %T, want *DecodeError", err, err)
			}
			if m != nil {
				t.Fatalf("Decode returned %#v alongside error %v", m, err)
			}
			if n := len(err.Error()); n > 256 {
				t.Fatalf("error text is %d bytes: %s", n, err)
			}
			if !isAny(err, sentinels) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if u, ok := m.(Unknown); ok {
			if _, err := Encode(u); !errors.Is(err, ErrNotEncodable) {
				t.Fatalf("Encode(Unknown) error = %v, want ErrNotEncodable", err)
			}
			return
		}
		encoded, err := Encode(m)
		if err != nil {
			t.Fatalf("Decode accepted the frame as %#v but Encode refused it: %v", m, err)
		}
		if !utf8.Valid(encoded) || !json.Valid(encoded) {
			t.Fatalf("Encode produced invalid UTF-8 or JSON: %q", encoded)
		}
		again, err := Decode(encoded)
		if err != nil {
			t.Fatalf("Decode of Encode's output %q: %v", encoded, err)
		}
		assertSameMessage(t, m, again)
		twice, err := Encode(again)
		if err != nil {
			t.Fatalf("second Encode: %v", err)
		}
		if !bytes.Equal(encoded, twice) {
			t.Fatalf("Encode is not stable:\n first: %s\nsecond: %s", encoded, twice)
		}
	})
}

func isAny(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// FuzzAppendString checks the hand-written string escaper: its output is
// valid JSON and decodes to what encoding/json's own output decodes to.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c\n\x00", "猫\u2028", "\xff\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		encoded := appendString(nil, s)
		var got string
		if err := json.Unmarshal(encoded, &got); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, encoded, err)
		}
		ref, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("appendString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}
