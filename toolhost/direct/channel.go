package direct

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// The host's channel: a socket pair handed over as fd 3 where the system
// can pass descriptors past stderr (Unix), else a loopback TCP connection
// the host makes back to us, proving itself with a one-time token (Windows,
// where a child gets only stdin, stdout and stderr).
const (
	envChannel      = "VCPNODE_DIRECT_CHANNEL" // host:port to connect to
	envChannelToken = "VCPNODE_DIRECT_TOKEN"   // its first line
)

// connectWait is how long a host has to connect back to us.
const connectWait = 30 * time.Second

// channel is the link to one host, made before it starts.
type channel interface {
	// childFile is the host's fd 3, or nil.
	childFile() *os.File
	// childEnv is added to the host's environment.
	childEnv() []string
	// connect returns our end once the host is up; started reports whether
	// the host (its tree) still runs, so a host that died early fails fast.
	connect(running func() bool) (net.Conn, error)
	// close releases what connect did not hand over.
	close()
}

// pairChannel is a socket pair: ours, and theirs for the host's fd 3.
type pairChannel struct{ ours, theirs *os.File }

func (c *pairChannel) childFile() *os.File { return c.theirs }
func (c *pairChannel) childEnv() []string  { return nil }

func (c *pairChannel) connect(func() bool) (net.Conn, error) {
	c.theirs.Close() // the host has its copy
	conn, err := net.FileConn(c.ours)
	c.ours.Close() // FileConn made its own descriptor
	return conn, err
}

func (c *pairChannel) close() {
	c.theirs.Close()
	c.ours.Close()
}

// tcpChannel is a listener on loopback that takes one connection: the
// first whose first line is the token. Others are dropped.
type tcpChannel struct {
	ln    *net.TCPListener
	token string
}

func newTCPChannel() (*tcpChannel, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return &tcpChannel{ln: ln, token: hex.EncodeToString(b)}, nil
}

func (c *tcpChannel) childFile() *os.File { return nil }

func (c *tcpChannel) childEnv() []string {
	return []string{envChannel + "=" + c.ln.Addr().String(), envChannelToken + "=" + c.token}
}

func (c *tcpChannel) connect(running func() bool) (net.Conn, error) {
	defer c.ln.Close()
	deadline := time.Now().Add(connectWait)
	for time.Now().Before(deadline) {
		if !running() {
			return nil, errors.New("the Node.js host exited before it connected")
		}
		// Short accepts, so a host that died is noticed.
		next := time.Now().Add(100 * time.Millisecond)
		if next.After(deadline) {
			next = deadline
		}
		_ = c.ln.SetDeadline(next)
		conn, err := c.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return nil, err
		}
		if c.proves(conn) {
			return conn, nil
		}
		conn.Close()
	}
	return nil, fmt.Errorf("the Node.js host did not connect within %s", connectWait)
}

// proves reads the token line, exactly its length: what the host sends
// after it stays unread, for the message reader.
func (c *tcpChannel) proves(conn net.Conn) bool {
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetReadDeadline(time.Time{})
	got := make([]byte, len(c.token)+1)
	if _, err := io.ReadFull(conn, got); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, []byte(c.token+"\n")) == 1
}

func (c *tcpChannel) close() { c.ln.Close() }
