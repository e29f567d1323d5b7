package testnet

import (
	"net"
	"testing"
	"time"
)

// A connection to the listener is accepted and then closed by it.
func TestClosingListenerAcceptsAndCloses(t *testing.T) {
	ln := ClosingListener(t)
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A bound, not a wait: a listener that never closed would block the read.
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("read = %d, %v; want the listener to close the connection", n, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
