package hubconn

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
)

const testKey = "hubconn-test-key"

func dialHub(t *testing.T, live Liveness) (*Conn, *demohub.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	hub, err := demohub.Start(demohub.Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	u, err := url.Parse(hub.DialURL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, u, Options{HandshakeTimeout: 10 * time.Second, Liveness: live, ReadLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	server, err := hub.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, server
}

// The server's close text may echo the key: every user of hubconn gets it
// redacted, the session and the observer channels alike.
func TestCloseTextIsRedacted(t *testing.T) {
	c, server := dialHub(t, Liveness{PingInterval: time.Minute, PongTimeout: time.Minute})
	server.CloseWith(4001, "go away VCP_Key="+testKey)
	var err error
	for err == nil {
		_, err = c.NextReader() // connection_ack first
	}
	if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "code 4001") {
		t.Fatalf("close error = %q; want the code and no key", err)
	}
}

// Silence past the window ends the connection with a plain reason; the
// deadline is the window from the last sign of life, never more.
func TestSilenceEndsTheConnection(t *testing.T) {
	live := Liveness{PingInterval: 50 * time.Millisecond, PongTimeout: 100 * time.Millisecond}
	c, server := dialHub(t, live)
	server.StopPonging()
	before := c.LiveUntil()
	var err error
	for err == nil {
		_, err = c.NextReader()
	}
	if !strings.Contains(err.Error(), "no pong or frame from the server for 150ms") {
		t.Fatalf("error = %q; want the silence named", err)
	}
	if d := c.LiveUntil().Sub(before); d < 0 {
		t.Errorf("the deadline moved back by %s", -d)
	}
}

func TestDialTellsAnEmptyHandshake(t *testing.T) {
	hub, err := demohub.Start(demohub.Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	u, err := url.Parse("ws://" + hub.Addr() + demohub.EndpointPrefix + "wrong-key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(context.Background(), u, Options{HandshakeTimeout: 10 * time.Second})
	if !errors.Is(err, ErrEmptyHandshake) || !ReachedServer(err) {
		t.Fatalf("dial with a wrong key: %v; want ErrEmptyHandshake", err)
	}
	if strings.Contains(err.Error(), "wrong-key") {
		t.Fatalf("the error shows the key: %v", err)
	}
}
