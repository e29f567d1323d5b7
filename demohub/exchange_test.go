package demohub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/wsproto"
)

func TestCallRoundTrip(t *testing.T) {
	t.Parallel()
	for _, noHistory := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoHistory=%v", noHistory), func(t *testing.T) {
			t.Parallel()
			h := startHub(t, Options{NoHistory: noHistory})
			ws, c := dialNode(t, h)
			answerCalls(t, ws)
			ctx := testContext(t)

			res, err := c.Call(ctx, "Echo", map[string]any{"text": "hi", "n": 3})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.RequestID != "fh-"+fmt.Sprint(h.requestN.Load()) || res.Status != wsproto.StatusSuccess {
				t.Errorf("result = %+v", res)
			}
			var got struct {
				Tool string         `json:"tool"`
				Args map[string]any `json:"args"`
			}
			if err := json.Unmarshal(res.Result, &got); err != nil {
				t.Fatal(err)
			}
			if got.Tool != "Echo" || got.Args["text"] != "hi" || got.Args["n"] != 3.0 {
				t.Errorf("node saw %+v", got)
			}
			// Nil args still reach the node as an object.
			res, err = c.Call(ctx, "NoArgs", nil)
			if err != nil || !strings.Contains(string(res.Result), `"args":{}`) {
				t.Errorf("Call without args = %s, %v", res.Result, err)
			}
			if n := len(c.Received()); (n == 0) != noHistory {
				t.Errorf("Received() has %d frames with NoHistory=%v", n, noHistory)
			}
		})
	}
}

func TestConcurrentCallsMatchedByRequestID(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	ctx := testContext(t)
	readType(t, ws, wsproto.TypeConnectionAck)

	const n = 5
	results := make(chan wsproto.ToolResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := c.Call(ctx, "Slow", map[string]any{"i": i})
			if err != nil {
				t.Errorf("Call %d: %v", i, err)
				return
			}
			results <- res
		})
	}
	// The node answers in reverse order, plus a result nobody asked for.
	var ids []string
	for range n {
		env := readType(t, ws, wsproto.TypeExecuteTool)
		ids = append(ids, env["data"].(map[string]any)["requestId"].(string))
	}
	writeText(t, ws, `{"type":"tool_result","data":{"requestId":"stray","status":"success","result":1}}`)
	for i := n - 1; i >= 0; i-- {
		writeText(t, ws, `{"type":"tool_result","data":{"requestId":"`+ids[i]+`","status":"success","result":"`+ids[i]+`"}}`)
	}
	wg.Wait()
	close(results)
	for res := range results {
		if string(res.Result) != `"`+res.RequestID+`"` {
			t.Errorf("result %s carries %s", res.RequestID, res.Result)
		}
	}
	m, err := c.WaitType(ctx, wsproto.TypeToolResult)
	if err != nil || m.(wsproto.ToolResult).RequestID != "stray" {
		t.Errorf("unclaimed result = %+v, %v", m, err)
	}
}

func TestWaitForConsumesInArrivalOrder(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	ctx := testContext(t)
	writeText(t, ws, `{"type":"report_ip","data":{"serverName":"first","localIPs":[]}}`)
	writeText(t, ws, `{"type":"register_tools","data":{"capabilities":{"cancelTool":true},"tools":[]}}`)
	writeText(t, ws, `{"type":"report_ip","data":{"serverName":"second","localIPs":[]}}`)

	serverName := func(m wsproto.Message) string { return m.(wsproto.ReportIP).ServerName }
	m, err := c.WaitType(ctx, wsproto.TypeReportIP)
	if err != nil || serverName(m) != "first" {
		t.Fatalf("first report_ip = %+v, %v", m, err)
	}
	if m, err := c.WaitType(ctx, wsproto.TypeRegisterTools); err != nil || !m.(wsproto.RegisterTools).Capabilities.CancelTool {
		t.Fatalf("register_tools = %+v, %v", m, err)
	}
	m, err = c.WaitFor(ctx, func(m wsproto.Message) bool { return m.MessageType() == wsproto.TypeReportIP })
	if err != nil || serverName(m) != "second" {
		t.Fatalf("second report_ip = %+v, %v", m, err)
	}
	// Everything is consumed now: the next wait ends with its context.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if m, err := c.WaitType(short, wsproto.TypeReportIP); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait on consumed frames = %+v, %v; want deadline exceeded", m, err)
	}
	if got := len(c.Received()); got != 3 {
		t.Errorf("Received() has %d frames, want 3", got)
	}
}

func TestMalformedFramesAreRecordedAndSurvived(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	ctx := testContext(t)
	writeText(t, ws, `not json{`)
	writeText(t, ws, `[1,2]`)
	writeText(t, ws, `{"type":"tool_result","data":{"status":"success"}}`) // no requestId
	writeText(t, ws, `{"type":"mystery","data":{}}`)
	if err := ws.WriteMessage(websocket.BinaryMessage, []byte(`{"type":"report_ip","data":{"localIPs":["10.0.0.2"]}}`)); err != nil {
		t.Fatal(err)
	}

	if _, err := c.WaitType(ctx, wsproto.TypeReportIP); err != nil {
		t.Fatalf("binary report_ip after malformed frames: %v", err)
	}
	if m, err := c.WaitType(ctx, "mystery"); err != nil {
		t.Fatalf("unknown type: %v", err)
	} else if _, ok := m.(wsproto.Unknown); !ok {
		t.Errorf("unknown type decoded as %T", m)
	}
	got := c.Received()
	if len(got) != 5 {
		t.Fatalf("Received() has %d frames, want 5", len(got))
	}
	for i, f := range got[:3] {
		if f.Err == nil || f.Msg != nil || f.Dir != FromNode || f.ConnID != c.ID() {
			t.Errorf("frame %d = %+v, want a recorded decode error", i, f)
		}
	}
	if !got[4].Binary || got[4].Err != nil {
		t.Errorf("binary frame = %+v", got[4])
	}
	select {
	case <-c.Done():
		t.Fatalf("connection ended: %v", c.Err())
	default:
	}
}

func TestOversizedFrameClosesWith1009(t *testing.T) {
	t.Parallel()
	const limit = 1024
	atLimit := `{"type":"mystery","data":{"pad":"` + strings.Repeat("x", limit-36) + `"}}`
	if len(atLimit) != limit {
		t.Fatalf("test frame is %d bytes", len(atLimit))
	}
	tests := []struct {
		name string
		size int
	}{
		{"one byte over", limit + 1},
		// Larger than the socket buffers: the hub must drain the rest so the
		// node reads the close frame instead of a reset.
		{"megabytes over", 16 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHub(t, Options{ReadLimit: limit})
			ws, c := dialNode(t, h)
			readType(t, ws, wsproto.TypeConnectionAck)
			writeText(t, ws, atLimit)
			if _, err := c.WaitType(testContext(t), "mystery"); err != nil {
				t.Fatalf("frame at the limit: %v", err)
			}

			// Written concurrently: a big write blocks until the hub drains it.
			writeErr := make(chan error, 1)
			go func() {
				writeErr <- ws.WriteMessage(websocket.TextMessage, []byte(strings.Repeat(" ", tt.size)))
			}()
			if ce := readClose(t, ws); ce.Code != websocket.CloseMessageTooBig {
				t.Errorf("client saw close %d, want 1009", ce.Code)
			}
			// The client stops writing once it has answered the close frame.
			if err := <-writeErr; err != nil && !errors.Is(err, websocket.ErrCloseSent) {
				t.Errorf("client write of the oversized frame: %v", err)
			}
			ws.Close() // as a node does when its read fails; the hub stops lingering
			waitDone(t, c)
			if !errors.Is(c.Err(), websocket.ErrReadLimit) {
				t.Errorf("Err() = %v, want ErrReadLimit", c.Err())
			}
		})
	}
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	ctx := testContext(t)
	if err := c.Send(ctx, wsproto.ExecuteTool{}); err == nil {
		t.Error("Send of an execute_tool without requestId succeeded")
	}
	if err := c.SendRaw(ctx, []byte("{broken")); err != nil {
		t.Errorf("SendRaw: %v", err)
	}
	if err := c.SendBinary(ctx, []byte{0xff, 0x00}); err != nil {
		t.Errorf("SendBinary: %v", err)
	}
	readType(t, ws, wsproto.TypeConnectionAck)
	if kind, data := readFrame(t, ws); kind != websocket.TextMessage || string(data) != "{broken" {
		t.Errorf("raw frame = %d %q", kind, data)
	}
	if kind, data := readFrame(t, ws); kind != websocket.BinaryMessage || string(data) != "\xff\x00" {
		t.Errorf("binary frame = %d %q", kind, data)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Send(cancelled, wsproto.CancelTool{RequestID: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with a cancelled context = %v", err)
	}
	c.Drop()
	waitDone(t, c)
	if err := c.Send(ctx, wsproto.CancelTool{RequestID: "x"}); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Send after Drop = %v, want ErrConnClosed", err)
	}
}

func TestOnFrameSeesBothDirectionsInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	h := startHub(t, Options{OnFrame: func(f Frame) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, f.Dir.String()+" "+string(f.Msg.MessageType()))
	}})
	ws, c := dialNode(t, h)
	answerCalls(t, ws)
	if _, err := c.Call(testContext(t), "Echo", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"hub->node connection_ack", "hub->node execute_tool", "node->hub tool_result"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("observed %v, want %v", seen, want)
	}
}

func TestWaitAfterEndStillSeesEarlierFrames(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	writeText(t, ws, `{"type":"report_ip","data":{"localIPs":[]}}`)
	ws.Close()
	waitDone(t, c)
	ctx := testContext(t)
	if _, err := c.WaitType(ctx, wsproto.TypeReportIP); err != nil {
		t.Fatalf("frame sent before the end: %v", err)
	}
	// An abrupt client close reads as 1006 or, when the client had unread
	// data (the ack), as a connection reset: both are the end of the conn.
	_, err := c.WaitType(ctx, wsproto.TypeReportIP)
	if !errors.Is(err, ErrConnClosed) {
		t.Errorf("wait after the end = %v, want ErrConnClosed", err)
	}
	t.Logf("error reads: %v", err)
}
