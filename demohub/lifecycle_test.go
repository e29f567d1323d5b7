package demohub

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestNodePingsAnsweredUnlessStopped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      Options
		stop      bool
		wantPongs int
	}{
		{"answers", Options{}, false, 1},
		{"StopPonging", Options{}, true, 0},
		{"NoPong option", Options{NoPong: true}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := startHub(t, tt.opts)
			ws, c := dialNode(t, h)
			ctx := testContext(t)
			if tt.stop {
				c.StopPonging()
			}
			pongs := 0
			ws.SetPongHandler(func(string) error { pongs++; return nil })
			readType(t, ws, wsproto.TypeConnectionAck)

			if err := ws.WriteControl(websocket.PingMessage, []byte("p1"), time.Now().Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
			// Once the hub has handled the ping, any pong is already on the
			// wire ahead of this marker frame.
			if err := c.WaitPings(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := c.Send(ctx, wsproto.CancelTool{RequestID: "marker"}); err != nil {
				t.Fatal(err)
			}
			readType(t, ws, wsproto.TypeCancelTool)
			if pongs != tt.wantPongs {
				t.Errorf("client got %d pongs, want %d", pongs, tt.wantPongs)
			}
			if got := c.PingsReceived(); got != 1 {
				t.Errorf("PingsReceived() = %d, want 1", got)
			}
			select {
			case <-c.Done():
				t.Errorf("connection ended: %v", c.Err())
			default:
			}
		})
	}
}

func TestHubPing(t *testing.T) {
	t.Parallel()
	t.Run("node reading answers", func(t *testing.T) {
		t.Parallel()
		h := startHub(t, Options{})
		ws, c := dialNode(t, h)
		answerCalls(t, ws) // keeps the client reading
		for range 2 {
			if err := c.Ping(testContext(t)); err != nil {
				t.Fatalf("Ping: %v", err)
			}
		}
		if got := c.PongCount(); got != 2 {
			t.Errorf("PongCount() = %d, want 2", got)
		}
	})
	t.Run("node not reading", func(t *testing.T) {
		t.Parallel()
		h := startHub(t, Options{})
		_, c := dialNode(t, h)
		ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
		defer cancel()
		if err := c.Ping(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Ping = %v, want deadline exceeded", err)
		}
	})
}

func TestDropIsAnAbnormalClosure(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	readType(t, ws, wsproto.TypeConnectionAck)
	c.Drop()
	if ce := readClose(t, ws); ce.Code != websocket.CloseAbnormalClosure {
		t.Errorf("client saw close %d, want 1006", ce.Code)
	}
	waitDone(t, c)
	if len(h.Conns()) != 0 {
		t.Errorf("Conns() still lists the dropped connection")
	}
}

func TestCloseWithSendsCloseFrame(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.CloseWith(4001, "go away")
	}()
	ce := readClose(t, ws) // reading lets the client echo the close frame
	if ce.Code != 4001 || ce.Text != "go away" {
		t.Errorf("client saw close %d %q, want 4001 \"go away\"", ce.Code, ce.Text)
	}
	<-closed
	waitDone(t, c)
	var hubSaw *websocket.CloseError
	if !errors.As(c.Err(), &hubSaw) || hubSaw.Code != 4001 {
		t.Errorf("Err() = %v, want the node's echo of 4001", c.Err())
	}
}

func TestCloseUnblocksWaiters(t *testing.T) {
	t.Parallel()
	h, err := Start(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	ws, _, err := dialRaw(testContext(t), h.DialURL())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ctx := testContext(t)
	c, err := h.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}

	waiters := map[string]func() error{
		"Accept": func() error { _, err := h.Accept(ctx); return err },
		"WaitHandshakes": func() error {
			return h.WaitHandshakes(ctx, func(ok, _ int) bool { return ok > 5 })
		},
		"WaitType":  func() error { _, err := c.WaitType(ctx, "never"); return err },
		"Call":      func() error { _, err := c.Call(ctx, "Unanswered", nil); return err },
		"Ping":      func() error { return c.Ping(ctx) },
		"WaitPings": func() error { return c.WaitPings(ctx, 1) },
	}
	want := map[string]error{"Accept": ErrClosed, "WaitHandshakes": ErrClosed}
	errs := make(map[string]chan error)
	for name, wait := range waiters {
		ch := make(chan error, 1)
		errs[name] = ch
		go func() { ch <- wait() }()
	}
	h.Close()
	for name, ch := range errs {
		err := <-ch
		wantErr := want[name]
		if wantErr == nil {
			wantErr = ErrConnClosed
		}
		if !errors.Is(err, wantErr) {
			t.Errorf("%s after Close = %v, want %v", name, err, wantErr)
		}
	}
	waitDone(t, c)
}

func TestStopAndResume(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ws, c := dialNode(t, h)
	readType(t, ws, wsproto.TypeConnectionAck)
	base := h.BaseURL()

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		h.Stop(testContext(t))
	}()
	// The real server's shutdown closes sockets without a code.
	if ce := readClose(t, ws); ce.Code != websocket.CloseNoStatusReceived {
		t.Errorf("client saw close %d, want 1005", ce.Code)
	}
	<-stopped
	waitDone(t, c)
	h.Stop(testContext(t)) // a second Stop is a no-op

	if ws, resp, err := dialRaw(testContext(t), h.DialURL()); err == nil {
		ws.Close()
		t.Fatal("dial while stopped succeeded")
	} else if resp != nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial while stopped = %v, want connection refused", err)
	}

	if err := h.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := h.Resume(); err != nil {
		t.Errorf("second Resume: %v", err)
	}
	if h.BaseURL() != base {
		t.Errorf("BaseURL changed from %s to %s", base, h.BaseURL())
	}
	_, c2 := dialNode(t, h)
	if c2.ID() == c.ID() {
		t.Errorf("new connection reused id %s", c.ID())
	}
	if ok, refused := h.Handshakes(); ok != 2 || refused != 0 {
		t.Errorf("Handshakes() = %d, %d; want 2, 0", ok, refused)
	}
	h.Close()
	if err := h.Resume(); !errors.Is(err, ErrClosed) {
		t.Errorf("Resume after Close = %v, want ErrClosed", err)
	}
}

// TestCloseLeavesNoGoroutines is not parallel: it counts the process's goroutines.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		h, err := Start(Options{Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		ctx := testContext(t)
		var stops []func()
		for range 3 {
			ws, _, err := dialRaw(ctx, h.DialURL())
			if err != nil {
				t.Fatal(err)
			}
			stops = append(stops, answerCalls(t, ws))
			c, err := h.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Call(ctx, "Echo", nil); err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = c.WaitType(ctx, "never") }() // a waiter still blocked at Close
		}
		h.Close()
		for _, stop := range stops {
			stop()
		}
	}()

	ctx, cancel := context.WithTimeout(t.Context(), testwait.Limit)
	defer cancel()
	if !testwait.Poll(ctx, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
