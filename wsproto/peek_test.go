package wsproto

import (
	"strings"
	"testing"
)

func TestPeekCall(t *testing.T) {
	for _, c := range []struct {
		frame string
		typ   Type
		id    string
	}{
		{`{"type":"execute_tool","data":{"requestId":"a","toolArgs":{"x":"` + strings.Repeat("y", 1000) + `"}}}`, TypeExecuteTool, "a"},
		{`{"type":"execute_tool","data":{"toolArgs":{"x":[1,2,{"z":null}]},"requestId":"b"}}`, TypeExecuteTool, "b"},
		{`{"extra":[1,{"a":"b"}],"type":"cancel_tool","data":{"requestId":"c"}}`, TypeCancelTool, "c"},
		{`{"type":"execute_tool","data":{"requestId":7}}`, TypeExecuteTool, ""},
		{`not json`, "", ""},
		{`{"type":"execute_tool","data":{"requestId":"d"`, TypeExecuteTool, "d"},
		// Broken or odd frames give what was found before the fault.
		{`{"type":"execute_tool","data":"x","extra":1}`, TypeExecuteTool, ""},
		{`{"type":"execute_tool","data":{"toolArgs":`, TypeExecuteTool, ""},
		{`{"type":"execute_tool","data":{1:2}}`, TypeExecuteTool, ""},
		{`{"extra":[1,`, "", ""},
		{`{"type":"cancel_tool",]`, TypeCancelTool, ""},
	} {
		typ, id := PeekCall([]byte(c.frame))
		if typ != c.typ || id != c.id {
			t.Errorf("PeekCall(%.60q) = %q, %q; want %q, %q", c.frame, typ, id, c.typ, c.id)
		}
	}
}
