package wsproto

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"testing"
)

// normalize returns m with every raw JSON value compacted, so that messages
// that differ only in insignificant whitespace compare equal: Decode keeps
// raw values as they arrived, Encode compacts them.
func normalize(t testing.TB, m Message) Message {
	t.Helper()
	c := func(raw json.RawMessage) json.RawMessage {
		if raw == nil {
			return nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			t.Fatalf("raw value %q is not JSON: %v", raw, err)
		}
		return buf.Bytes()
	}
	switch v := m.(type) {
	case ExecuteTool:
		args := maps.Clone(v.ToolArgs)
		for k, a := range args {
			args[k] = c(a)
		}
		v.ToolArgs, v.VCPContext = args, c(v.VCPContext)
		return v
	case ToolResult:
		v.Result = c(v.Result)
		return v
	case RegisterTools:
		tools := make([]json.RawMessage, len(v.Tools))
		for i, tool := range v.Tools {
			tools[i] = c(tool)
		}
		v.Tools = tools
		return v
	case PluginCallbackForward:
		v.CallbackData = c(v.CallbackData)
		return v
	case Unknown:
		v.Data = c(v.Data)
		return v
	}
	return m
}

// assertSameMessage fails unless a and b are equal up to raw JSON whitespace.
func assertSameMessage(t testing.TB, a, b Message) {
	t.Helper()
	na, nb := normalize(t, a), normalize(t, b)
	if !reflect.DeepEqual(na, nb) {
		t.Fatalf("messages differ:\n first: %#v\nsecond: %#v", na, nb)
	}
}
