package demohub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/wsproto"
)

// testKey uses every character class a valid key may hold.
const testKey = "test-key_0.9~"

func startHub(t *testing.T, opts Options) *Hub {
	t.Helper()
	if opts.Key == "" {
		opts.Key = testKey
	}
	opts.Logf = func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		if strings.Contains(line, testKey) {
			t.Errorf("log line leaks the key: %q", line)
		}
		t.Log(line)
	}
	h, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialRaw(ctx context.Context, url string) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	return d.DialContext(ctx, url, nil)
}

// dialNode connects a raw client to h and returns it with the hub's side.
func dialNode(t *testing.T, h *Hub) (*websocket.Conn, *Conn) {
	t.Helper()
	ctx := testContext(t)
	ws, _, err := dialRaw(ctx, h.DialURL())
	if err != nil {
		t.Fatalf("dial hub: %v", err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	c, err := h.Accept(ctx)
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	return ws, c
}

// readFrame reads the next data frame from the client side.
func readFrame(t *testing.T, ws *websocket.Conn) (int, []byte) {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	kind, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("client read: %v", err)
	}
	return kind, data
}

// readType reads the next data frame and checks its envelope type.
func readType(t *testing.T, ws *websocket.Conn, want wsproto.Type) map[string]any {
	t.Helper()
	_, data := readFrame(t, ws)
	var env map[string]any
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatalf("client got a frame that is not JSON: %v: %s", err, data)
	}
	if env["type"] != string(want) {
		t.Fatalf("client got %s, want type %s", data, want)
	}
	return env
}

// readClose reads until the connection ends and returns the close error.
func readClose(t *testing.T, ws *websocket.Conn) *websocket.CloseError {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := ws.ReadMessage()
		if err == nil {
			t.Logf("client skipped frame %s", data)
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("client read ended with %v (%T), want a close error", err, err)
		}
		return ce
	}
}

func writeText(t *testing.T, ws *websocket.Conn, s string) {
	t.Helper()
	_ = ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		t.Fatalf("client write: %v", err)
	}
}

// answerCalls plays a node that answers every execute_tool with a success
// result echoing the tool name and args, until its socket closes. The
// returned function closes the socket and waits for the goroutine.
func answerCalls(t *testing.T, ws *websocket.Conn) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var writeMu sync.Mutex
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var env struct {
				Type string `json:"type"`
				Data struct {
					RequestID string          `json:"requestId"`
					ToolName  string          `json:"toolName"`
					ToolArgs  json.RawMessage `json:"toolArgs"`
				} `json:"data"`
			}
			if err := json.Unmarshal(data, &env); err != nil || env.Type != string(wsproto.TypeExecuteTool) {
				continue
			}
			reply, _ := json.Marshal(map[string]any{"type": "tool_result", "data": map[string]any{
				"requestId": env.Data.RequestID, "status": "success",
				"result": map[string]any{"tool": env.Data.ToolName, "args": env.Data.ToolArgs},
			}})
			writeMu.Lock()
			err = ws.WriteMessage(websocket.TextMessage, reply)
			writeMu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = ws.Close()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitDone(t *testing.T, c *Conn) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("connection %s did not end", c.ID())
	}
}
