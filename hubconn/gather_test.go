package hubconn

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/wsproto"
)

// writeCounter counts the writes that reach the socket.
type writeCounter struct {
	net.Conn
	mu     sync.Mutex
	writes []int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, len(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *writeCounter) count() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.writes...)
}

// Frames written between Gather and Flush, a ping among them, reach the
// server whole and in order in one write(2); outside a gathering each frame
// is a write of its own, as before.
func TestGatheredFramesLeaveInOneWrite(t *testing.T) {
	c, server := dialHub(t, Liveness{PingInterval: time.Minute, PongTimeout: time.Minute})
	if c.gather == nil {
		t.Fatal("Dial made no gathering socket")
	}
	counter := &writeCounter{Conn: c.gather.Conn}
	c.gather.Conn = counter // nothing else writes yet

	frame := func(i int) []byte {
		data, err := wsproto.Encode(wsproto.ToolResult{RequestID: fmt.Sprint("r", i), Status: wsproto.StatusSuccess, Result: []byte(`"ok"`)})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	c.Gather()
	for i := range 100 {
		if i == 50 {
			if err := c.PingWith("mid"); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.WriteText(frame(i), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(counter.count()); n != 0 {
		t.Fatalf("%d writes reached the socket before Flush", n)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(counter.count()); n != 1 {
		t.Fatalf("Flush made %d writes, want 1", n)
	}
	if err := c.WriteText(frame(100), time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := len(counter.count()); n != 2 {
		t.Fatalf("a frame outside a gathering made %d writes in all, want 2", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := server.WaitPings(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 101 {
		m, err := server.WaitType(ctx, wsproto.TypeToolResult)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if id := m.(wsproto.ToolResult).RequestID; id != fmt.Sprint("r", i) {
			t.Fatalf("frame %d is %s", i, id)
		}
	}
}

// A batch never holds more than gatherMax: what would not fit goes out
// first, and a large write (a streamed file's chunk) goes straight after
// it, so the bytes keep their order.
func TestGatherKeepsOrderAcrossLargeWrites(t *testing.T) {
	var out bytes.Buffer
	sink := &recordConn{out: &out}
	g := &gatherConn{Conn: sink}
	g.gather()
	var want bytes.Buffer
	for i, size := range []int{100, gatherMax / 2, 200, gatherMax, 300, gatherMax - 100, 50} {
		p := bytes.Repeat([]byte{byte('a' + i)}, size)
		if _, err := g.Write(p); err != nil {
			t.Fatal(err)
		}
		want.Write(p)
		if len(g.buf) > gatherMax {
			t.Fatalf("after write %d the batch holds %d bytes", i, len(g.buf))
		}
	}
	if err := g.flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Fatal("the bytes reached the socket out of order")
	}
	if sink.writes >= 7 {
		t.Fatalf("%d writes for 7, want fewer", sink.writes)
	}
}

type recordConn struct {
	net.Conn
	out    *bytes.Buffer
	writes int
}

func (r *recordConn) Write(p []byte) (int, error) {
	r.writes++
	return r.out.Write(p)
}

// A large frame leaves in pieces of frameWriteBuffer, not of the
// library's 4 KiB default: a 1 MiB frame in about 16 writes.
func TestLargeFrameLeavesInLargeWrites(t *testing.T) {
	c, server := dialHub(t, Liveness{PingInterval: time.Minute, PongTimeout: time.Minute})
	counter := &writeCounter{Conn: c.gather.Conn}
	c.gather.Conn = counter
	payload := bytes.Repeat([]byte("x"), 1<<20)
	data, err := wsproto.Encode(wsproto.ToolResult{RequestID: "big", Status: wsproto.StatusSuccess, Result: []byte(`"` + string(payload) + `"`)})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.NextWriter(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for rest := data; len(rest) > 0; rest = rest[min(len(rest), 8<<10):] {
		if _, err := w.Write(rest[:min(len(rest), 8<<10)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n, most := len(counter.count()), len(data)/frameWriteBuffer+2; n > most {
		t.Errorf("a %d-byte frame took %d writes, want at most %d", len(data), n, most)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := server.WaitType(ctx, wsproto.TypeToolResult)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(wsproto.ToolResult); got.RequestID != "big" || len(got.Result) != len(payload)+2 {
		t.Fatalf("the server got %s with %d bytes of result", got.RequestID, len(got.Result))
	}
}
