// Package testnet holds the tests' loopback network fixtures. Only _test
// files import it (internal/archtest checks).
package testnet

import (
	"net"
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
