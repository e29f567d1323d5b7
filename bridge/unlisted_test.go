package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// fakeConn is a connection whose frames the test reads and answers.
type fakeConn struct{ sent chan wsproto.Message }

func newFakeConn() *fakeConn { return &fakeConn{sent: make(chan wsproto.Message, 16)} }

func (f *fakeConn) send(m wsproto.Message) error { f.sent <- m; return nil }

func (f *fakeConn) next(t *testing.T) wsproto.Message {
	t.Helper()
	select {
	case m := <-f.sent:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("the client sent nothing")
		return nil
	}
}

// TestUnlistedSaysWhy: a name without a tool is told why in the words of
// the client's state, each with its cause for errors.Is, and a call of it
// says the same.
func TestUnlistedSaysWhy(t *testing.T) {
	c := New(Options{Log: zerolog.Nop(), ListWait: time.Hour})
	t.Cleanup(c.Close)
	expect := func(what, name string, cause error, parts ...string) {
		t.Helper()
		e := c.Unlisted(name)
		if !errors.Is(e, cause) {
			t.Errorf("%s: %v is not %v", what, e, cause)
		}
		for _, p := range parts {
			if !strings.Contains(e.Error(), p) {
				t.Errorf("%s: %q does not say %q", what, e, p)
			}
		}
	}
	expect("never connected", "Calc", ErrNotConnected, `no server tool "Calc": not connected to the VCP server`)

	conn := newFakeConn()
	c.Connected(conn.send)
	ask := conn.next(t).(wsproto.GetVCPManifests)
	expect("asked", "Calc", ErrNoListYet, `no server tool "Calc" yet: the server has not sent its list of tools yet (asked `)
	c.Handle(wsproto.VCPManifestResponse{RequestID: ask.RequestID, Plugins: []wsproto.VCPPlugin{{Name: "SciCalculator"}, {Name: "DiaryWriter"}}})
	if !pollState(c, StateOffered) {
		t.Fatalf("the list was never taken: %+v", c.Status())
	}
	expect("offered", "SciCalculater", ErrNotOffered, `the server's list has no tool "SciCalculater" (2 tools, received `, " ago)")
	if e := c.Unlisted("SciCalculater"); len(e.Names) != 2 || e.Names[0] != "DiaryWriter" {
		t.Errorf("names = %v, want the list's", e.Names)
	}
	expect("listed", "DiaryWriter", ErrNotOffered, `the server lists "DiaryWriter", but its tools are being registered here`)
	_, err := c.Call(context.Background(), "SciCalculater", nil, nil)
	if !errors.Is(err, ErrNotOffered) || !strings.Contains(err.Error(), `the server's list has no tool "SciCalculater"`) {
		t.Errorf("call of an unlisted tool: %v", err)
	}

	c.Disconnected()
	expect("disconnected", "Gone", ErrNotConnected, `no server tool "Gone": not connected to the VCP server; the last list (2 tools, received `)
}

// TestUnlistedWithoutBridge: a server that does not answer the list
// request has no bridge, and the call of any name says so.
func TestUnlistedWithoutBridge(t *testing.T) {
	c := New(Options{Log: zerolog.Nop(), ListWait: 50 * time.Millisecond})
	t.Cleanup(c.Close)
	conn := newFakeConn()
	c.Connected(conn.send)
	conn.next(t)
	if !pollState(c, StateNone) {
		t.Fatalf("never concluded there is no bridge: %+v", c.Status())
	}
	e := c.Unlisted("Calc")
	if !errors.Is(e, ErrNoBridge) || !strings.Contains(e.Error(), `no server tool "Calc": the server offers no tools to nodes`) ||
		!strings.Contains(e.Error(), "it did not answer the list request of ") {
		t.Errorf("without a bridge: %v", e)
	}
	if _, err := c.Call(context.Background(), "Calc", nil, nil); !errors.Is(err, ErrNoBridge) {
		t.Errorf("call without a bridge: %v", err)
	}
}

func pollState(c *Client, want State) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return testwait.Poll(ctx, func() bool { return c.Status().State == want })
}
