package testnet

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
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

// A socket path fits every system's socket address (macOS allows 103
// bytes), takes a listener, and its directory goes when the test ends.
func TestSocketPathListensAndGoes(t *testing.T) {
	var dir string
	t.Run("socket", func(t *testing.T) {
		path := SocketPath(t)
		if len(path) > 103 {
			t.Fatalf("%q is %d bytes", path, len(path))
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		dir = filepath.Dir(path)
	})
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there after the test: %v", dir, err)
	}
}
