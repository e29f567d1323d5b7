package node

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// [hub] auth = "auto" against the three servers of the key's migration:
// one that takes the key only in a header on the key-less path, one that
// knows only the key in the path (every server before the migration), and
// one behind a proxy that drops the header. The node connects to each,
// says which way in status, remembers it, and never backs off as from a
// wrong key.
func TestHubAuthAutoFindsTheWay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hub          string
		want         string
		refusedFirst int // handshakes the hub drops on the first connect
	}{
		{hub: demohub.AuthHeader, want: "header"},
		{hub: demohub.AuthPath, want: "path", refusedFirst: 1},
		{hub: demohub.AuthStripHeader, want: "path", refusedFirst: 1},
		{hub: demohub.AuthBoth, want: "header"},
	} {
		t.Run(tc.hub, func(t *testing.T) {
			t.Parallel()
			h := startHarness(t, harnessOpt{hubOpts: demohub.Options{Auth: tc.hub}, config: func(c *config.Config) {
				c.Node.Mode = config.ModeBoth
				c.Observer.Channels = []string{"VCPlog"}
			}})
			c := h.accept()
			if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
				t.Fatal(err)
			}
			h.acceptObserver(demohub.ChannelVCPLog)
			st := h.node.Status()
			if st.Connection.Auth != tc.want {
				t.Fatalf("status says the key went by %q, want %q", st.Connection.Auth, tc.want)
			}
			if !testwait.Poll(h.ctx, func() bool {
				obs := h.node.ObserverStatuses()
				return len(obs) == 1 && obs[0].Phase == PhaseConnected && obs[0].Auth == tc.want
			}) {
				t.Fatalf("observer = %+v, want connected by %q", h.node.ObserverStatuses(), tc.want)
			}
			_, refused := h.hub.Handshakes()
			// The node's first connect and the observer's each try the header once.
			if want := 2 * tc.refusedFirst; refused != want {
				t.Fatalf("the hub dropped %d handshakes, want %d", refused, want)
			}
			// Reconnects use the way that worked: no more dropped handshakes.
			for i := 0; i < 3; i++ {
				c.Drop()
				c = h.accept()
			}
			if _, again := h.hub.Handshakes(); again != refused {
				t.Errorf("reconnects dropped %d more handshakes; the way should be remembered", again-refused)
			}
			s := h.waitState("connected", func(s ConnState) bool { return s.Phase == PhaseConnected && s.Sessions == 4 })
			if s.HandshakesDropped != 0 || s.Auth != tc.want {
				t.Errorf("state = %+v", s)
			}
			if strings.Contains(h.logs.String(), "likely a wrong key") {
				t.Errorf("the wrong-key hint was logged")
			}
		})
	}
}

// [hub] auth = "header" never puts the key in the path: not even a first
// try of the path form reaches a migrated server.
func TestHubAuthHeaderNeverSendsThePathKey(t *testing.T) {
	t.Parallel()
	h := startHarness(t, harnessOpt{hubOpts: demohub.Options{Auth: demohub.AuthHeader}, config: func(c *config.Config) { c.Hub.Auth = "header" }})
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	if st := h.node.Status(); st.Connection.Auth != "header" {
		t.Fatalf("status = %+v", st.Connection)
	}
	if _, refused := h.hub.Handshakes(); refused != 0 {
		t.Fatalf("the hub dropped %d handshakes", refused)
	}
}
