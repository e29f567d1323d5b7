package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// sizeTool answers with the byte length of its "blob" argument.
type sizeTool struct{}

func (sizeTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "Size", Description: "measures its blob argument", Timeout: time.Minute, Builtin: true}
}

func (sizeTool) Invoke(_ context.Context, call toolhost.Call) (any, error) {
	return strconv.Itoa(len(call.Args["blob"])), nil
}

func blobCall(id string, n int) wsproto.ExecuteTool {
	blob := make([]byte, 0, n+2)
	blob = append(blob, '"')
	blob = append(blob, strings.Repeat("x", n)...)
	blob = append(blob, '"')
	return wsproto.ExecuteTool{RequestID: id, ToolName: "Size", ToolArgs: map[string]json.RawMessage{"blob": blob}}
}

// A 50 MiB execute_tool with ping 1 s / pong 1 s: the frame is decoded off
// the reader, pongs keep arriving, the connection survives and the call is
// answered on it.
func TestLargeFrameKeepsTheConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 50 MiB frame")
	}
	h := startHarness(t, harnessOpt{
		tools: []toolhost.Tool{sizeTool{}},
		config: func(c *config.Config) {
			c.Hub.PingInterval = config.Duration(time.Second)
			c.Hub.PongTimeout = config.Duration(time.Second)
			c.Node.ExposedTools = append(c.Node.ExposedTools, "Size")
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := h.accept()
	const size = 50 << 20
	res, err := c.CallExecute(ctx, blobCall("big", size))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != wsproto.StatusSuccess || firstText(t, res) != strconv.Itoa(size+2) {
		t.Fatalf("big call: %+v", res)
	}
	// Still the first connection, still alive: a ping round trip proves it.
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("connection after the large frame: %v", err)
	}
	if s, _ := h.node.State(); s.Sessions != 1 {
		t.Errorf("sessions = %d: the large frame cost the connection", s.Sessions)
	}
}

// Frames that do not fit the decode budget in time are answered "node
// busy", never dropped; the connection goes on.
func TestFrameOverTheDecodeBudgetIsAnsweredBusy(t *testing.T) {
	h := startHarness(t, harnessOpt{
		tools: []toolhost.Tool{sizeTool{}},
		config: func(c *config.Config) {
			c.Node.ExposedTools = append(c.Node.ExposedTools, "Size")
		},
		timings: func(tm *timings) {
			tm.decodeBudget = 8 * config.KiB
			tm.busyWait = 20 * time.Millisecond
		},
	})
	c := h.accept()
	res, err := c.CallExecute(h.ctx, blobCall("too-big", 20*config.KiB))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "node busy") {
		t.Fatalf("over-budget call: %+v", res)
	}
	if res := h.call(c, "Echo", map[string]any{"text": "small"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("small call after a busy refusal: %+v", res)
	}
	h.waitLog("node busy decoding earlier frames")
}

// A flood of garbage frames: every one is survived, but the log gets a few
// lines and a count, not one line each.
func TestGarbageFloodLogsBoundedLines(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	const flood = 500
	for i := range flood {
		if err := c.SendRaw(h.ctx, []byte(fmt.Sprintf("not json %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed execute_tool with a 1 MiB requestId: answered, and the id
	// is not copied into the log whole.
	longID := strings.Repeat("r", 1<<20)
	bad := `{"type":"execute_tool","data":{"requestId":"` + longID + `","toolName":7}}`
	if err := c.SendRaw(h.ctx, []byte(bad)); err != nil {
		t.Fatal(err)
	}
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == longID
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusError {
		t.Fatalf("malformed call with a long id: %v", err)
	}
	// Frames are handled in order, so after this round trip all are done.
	if res := h.call(c, "Echo", map[string]any{"text": "still here"}); res.Status != wsproto.StatusSuccess {
		t.Fatalf("after the flood: %+v", res)
	}
	c.Drop() // the session's end reports what was left out
	h.waitLog("similar warnings were left out of the log")

	logs := h.logs.String()
	if n := strings.Count(logs, "ignored a malformed frame"); n > toolhost.WarnBurst {
		t.Errorf("%d malformed-frame lines for %d frames, want at most %d", n, flood+1, toolhost.WarnBurst)
	}
	if !strings.Contains(logs, fmt.Sprintf(`"suppressed":%d`, flood+1-toolhost.WarnBurst)) {
		t.Errorf("no count of the %d suppressed lines in:\n%s", flood+1-toolhost.WarnBurst, tail(logs, 4000))
	}
	for _, line := range strings.Split(logs, "\n") {
		if len(line) > 4*config.KiB {
			t.Errorf("a log line of %d bytes: %.200s…", len(line), line)
		}
	}
	if strings.Count(logs, strings.Repeat("r", maxLogValue+1)) != 0 {
		t.Error("a request id longer than the clip length reached the log")
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func TestPeekCall(t *testing.T) {
	for _, c := range []struct {
		frame string
		typ   wsproto.Type
		id    string
	}{
		{`{"type":"execute_tool","data":{"requestId":"a","toolArgs":{"x":"` + strings.Repeat("y", 1000) + `"}}}`, wsproto.TypeExecuteTool, "a"},
		{`{"type":"execute_tool","data":{"toolArgs":{"x":[1,2,{"z":null}]},"requestId":"b"}}`, wsproto.TypeExecuteTool, "b"},
		{`{"extra":[1,{"a":"b"}],"type":"cancel_tool","data":{"requestId":"c"}}`, wsproto.TypeCancelTool, "c"},
		{`{"type":"execute_tool","data":{"requestId":7}}`, wsproto.TypeExecuteTool, ""},
		{`not json`, "", ""},
		{`{"type":"execute_tool","data":{"requestId":"d"`, wsproto.TypeExecuteTool, "d"},
	} {
		typ, id := peekCall([]byte(c.frame))
		if typ != c.typ || id != c.id {
			t.Errorf("peekCall(%.60q) = %q, %q; want %q, %q", c.frame, typ, id, c.typ, c.id)
		}
	}
}
