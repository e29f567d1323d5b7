package demohub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/wsproto"
)

// Send encodes m with wsproto.Encode and writes it as a text frame.
//
// A failed write drops the connection (gorilla cannot write after one) and
// returns ErrConnClosed; so does ctx ending mid-write, since a half-written
// frame cannot be taken back.
func (c *Conn) Send(ctx context.Context, m wsproto.Message) error {
	data, err := wsproto.Encode(m)
	if err != nil {
		return fmt.Errorf("demohub: connection %s: %w", c.id, err)
	}
	return c.write(ctx, websocket.TextMessage, data, m, nil)
}

// SendRaw writes data as a text frame, whatever it holds (malformed JSON,
// unknown types, invalid UTF-8).
func (c *Conn) SendRaw(ctx context.Context, data []byte) error {
	m, err := wsproto.Decode(data)
	return c.write(ctx, websocket.TextMessage, data, m, err)
}

// SendBinary writes data as a binary frame.
func (c *Conn) SendBinary(ctx context.Context, data []byte) error {
	m, err := wsproto.Decode(data)
	return c.write(ctx, websocket.BinaryMessage, data, m, err)
}

// write sends one data frame; msg and msgErr describe it for Sent and OnFrame.
func (c *Conn) write(ctx context.Context, kind int, data []byte, msg wsproto.Message, msgErr error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("demohub: connection %s: send: %w", c.id, err)
	}
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("demohub: connection %s: waiting to send: %w", c.id, ctx.Err())
	case <-c.done:
		return fmt.Errorf("%w (id %s): cannot send: %w", ErrConnClosed, c.id, c.Err())
	}
	defer func() { <-c.writeSem }()

	f := Frame{Dir: ToNode, ConnID: c.id, Raw: data, Binary: kind == websocket.BinaryMessage, Msg: msg, Err: msgErr, At: time.Now()}
	if f.Err != nil {
		f.Msg = nil
	}
	// Observed before the write, so an observer never sees the node's answer
	// before the frame that caused it.
	c.hub.observe(f)

	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultWriteTimeout)
	}
	_ = c.ws.SetWriteDeadline(deadline) // only the holder of writeSem touches it
	stop := context.AfterFunc(ctx, c.Drop)
	err := c.ws.WriteMessage(kind, data)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err() // the cause, rather than "use of closed network connection"
		}
		return c.writeFailed("send", err)
	}

	if !c.hub.opts.NoHistory {
		c.mu.Lock()
		c.sent = append(c.sent, f)
		c.mu.Unlock()
	}
	return nil
}

// Execute sends an execute_tool as given, without waiting for its result;
// the result is left for WaitFor.
func (c *Conn) Execute(ctx context.Context, call wsproto.ExecuteTool) error {
	return c.Send(ctx, call)
}

// Call sends execute_tool for tool with a fresh requestId ("fh-N") and waits
// for the tool_result carrying that id. args are JSON-encoded one by one.
func (c *Conn) Call(ctx context.Context, tool string, args map[string]any) (wsproto.ToolResult, error) {
	raw := make(map[string]json.RawMessage, len(args)) // never nil: the server always sends an object
	for k, v := range args {
		b, err := json.Marshal(v)
		if err != nil {
			return wsproto.ToolResult{}, fmt.Errorf("demohub: call %s: encode argument %q: %w", tool, k, err)
		}
		raw[k] = b
	}
	return c.CallExecute(ctx, wsproto.ExecuteTool{ToolName: tool, ToolArgs: raw})
}

// CallExecute is Call for a prepared execute_tool (for _vcpContext, raw
// args); an empty RequestID gets a fresh one.
func (c *Conn) CallExecute(ctx context.Context, call wsproto.ExecuteTool) (wsproto.ToolResult, error) {
	if call.RequestID == "" {
		call.RequestID = "fh-" + strconv.FormatUint(c.hub.requestN.Add(1), 10)
	}
	id := call.RequestID
	ch := make(chan wsproto.ToolResult, 1)
	c.mu.Lock()
	if _, dup := c.calls[id]; dup {
		c.mu.Unlock()
		return wsproto.ToolResult{}, fmt.Errorf("demohub: call %s: requestId %q is already awaited by another Call", call.ToolName, id)
	}
	c.calls[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.calls[id] == ch {
			delete(c.calls, id)
		}
		c.mu.Unlock()
	}()

	if err := c.Send(ctx, call); err != nil {
		return wsproto.ToolResult{}, err
	}
	select {
	case res := <-ch:
		return res, nil
	case <-ctx.Done():
		return wsproto.ToolResult{}, fmt.Errorf("demohub: call %s (%s): no tool_result: %w", call.ToolName, id, ctx.Err())
	case <-c.done:
		select {
		case res := <-ch: // arrived just before the end
			return res, nil
		default:
		}
		return wsproto.ToolResult{}, fmt.Errorf("%w (id %s) before the tool_result for %s (%s): %w", ErrConnClosed, c.id, call.ToolName, id, c.Err())
	}
}

// WaitFor returns the first received message, in arrival order, that
// matches pred and was not consumed yet, and consumes it. It waits for new
// frames until ctx is done or the connection ends. Frames that did not
// decode never match. pred runs with the connection locked: it must not
// call methods of the Conn.
func (c *Conn) WaitFor(ctx context.Context, pred func(wsproto.Message) bool) (wsproto.Message, error) {
	return c.waitFor(ctx, "a matching frame", pred)
}

// WaitType is WaitFor for the first message of type t.
func (c *Conn) WaitType(ctx context.Context, t wsproto.Type) (wsproto.Message, error) {
	return c.waitFor(ctx, "a "+string(t)+" frame", func(m wsproto.Message) bool { return m.MessageType() == t })
}

func (c *Conn) waitFor(ctx context.Context, what string, pred func(wsproto.Message) bool) (wsproto.Message, error) {
	var got wsproto.Message
	err := c.waitUntil(ctx, what, func() bool {
		for i, f := range c.queue {
			if pred(f.Msg) {
				got = f.Msg
				c.queue = slices.Delete(c.queue, i, i+1)
				return true
			}
		}
		return false
	})
	return got, err
}

// Received is a snapshot of every data frame the node sent, decodable or
// not, in arrival order (empty with Options.NoHistory).
func (c *Conn) Received() []Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Sent is a snapshot of every data frame the hub sent, connection_ack first.
func (c *Conn) Sent() []Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sent)
}
