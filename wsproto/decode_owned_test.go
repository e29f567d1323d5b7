package wsproto

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// decodeOwnedCases are frames where the fast path and the general path
// could disagree: escapes, nesting, whitespace, repeated and folded keys.
var decodeOwnedCases = []string{
	`{"type":"execute_tool","data":{"requestId":"r1","toolName":"T","toolArgs":{"a":"x","b":[1,{"c":"]}"}],"n":-1.5e3,"t":true,"z":null}}}`,
	` { "type" : "execute_tool" , "data" : { "requestId" : "r\"1" , "toolName" : "T\u00e9" , "toolArgs" : { "k\\ey" : "v\n" } } } `,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T"}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":null,"_vcpContext":null}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":{},"_vcpContext":{"river":[1]}}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":{"a":"1"},"toolArgs":{"b":"2"}}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":{"a":"1"},"toolArgs":null}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","RequestID":"folded"}}`,
	`{"type":"execute_tool","TYPE":"cancel_tool","data":{"requestId":"r","toolName":"T"}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","_vcpContext":[]}}`,
	`{"type":"execute_tool","data":{"requestId":"","toolName":"T"}}`,
	`{"type":"execute_tool","data":{"requestId":null,"toolName":"T"}}`,
	`{"type":"execute_tool","data":{"requestId":7,"toolName":"T"}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":[]}}`,
	`{"type":"execute_tool","data":[]}`,
	`{"type":"execute_tool"}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T"}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T"}} trailing`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T"},"data":{"requestId":"s","toolName":"U"}}`,
	`{"data":{"requestId":"r","toolName":"T"},"type":"execute_tool"}`,
	`{"type":"cancel_tool","data":{"requestId":"r"}}`,
	`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","ſtuff":1,"toolArgs":{"a":"\ud800"}}}`,
	"{\"type\":\"execute_tool\",\"data\":{\"requestId\":\"r\xff\",\"toolName\":\"T\",\"toolArgs\":{\"a\":\"\xfe\"}}}",
}

func TestDecodeOwnedMatchesDecode(t *testing.T) {
	for _, c := range decodeOwnedCases {
		checkOwnedMatches(t, []byte(c))
	}
}

func checkOwnedMatches(t *testing.T, frame []byte) {
	t.Helper()
	want, wantErr := Decode(frame)
	input := bytes.Clone(frame)
	got, gotErr := DecodeOwned(frame)
	if !bytes.Equal(input, frame) {
		t.Fatalf("DecodeOwned modified %q", input)
	}
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%q: DecodeOwned error %v, Decode error %v", frame, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nDecodeOwned %#v\nDecode      %#v", frame, got, want)
	}
}

func TestDecodeOwnedTakesTheFastPath(t *testing.T) {
	frame := []byte(`{"type":"execute_tool","data":{"requestId":"r","toolName":"T","toolArgs":{"big":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	m, ok := decodeExecuteFast(frame)
	if !ok {
		t.Fatal("a plain execute_tool took the general path")
	}
	// The argument points into the frame: no copy was made.
	arg := m.ToolArgs["big"]
	if &arg[0] != &frame[bytes.Index(frame, []byte(`"xxx`))] {
		t.Error("toolArgs value is a copy, not a slice of the frame")
	}
}

func FuzzDecodeOwned(f *testing.F) {
	for _, c := range decodeOwnedCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkOwnedMatches(t, frame)
	})
}
