// Package testnet holds the tests' loopback network fixtures and socket
// paths. Only _test
// files import it (internal/archtest checks).
package testnet

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// ClosingListener is a loopback (IPv4) listener that accepts and closes
// every connection, closed when the test ends: what a connect test needs to
// tell a refused connection from an allowed one.
func ClosingListener(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

// SocketPath is a fresh Unix socket path in a directory of its own, well
// inside the 107-byte limit of a socket address (t.TempDir() paths can be
// longer), the directory removed when the test ends.
func SocketPath(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "vc")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}
