package servertools

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolsource"
	"github.com/vcpnode/vcpnode/wsproto"
)

// A new list from the server is said to be offered only once a pass over
// the sources ended (committed or refused), and a server tool whose name
// is taken is left out with a warning in the commit and in status, never
// an error.
func TestAListIsOfferedOnceCommittedAndClashesAreLeftOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := New(zerolog.Nop(), time.Minute)
	defer s.Close(ctx)
	changed := make(chan struct{}, 4)
	env := toolsource.Env{Relisted: func() { changed <- struct{}{} }}
	cfg := config.Default()
	p, err := s.Prepare(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Commit(func(string) bool { return false }); len(w) != 0 || len(p.Specs()) != 0 {
		t.Fatalf("an empty list: warnings %q, specs %v", w, p.Specs())
	}

	asked := make(chan wsproto.GetVCPManifests, 1)
	s.Client().Connected(func(m wsproto.Message) error {
		if g, ok := m.(wsproto.GetVCPManifests); ok {
			asked <- g
		}
		return nil
	})
	var g wsproto.GetVCPManifests
	select {
	case g = <-asked:
	case <-ctx.Done():
		t.Fatal("the client never asked for the list")
	}
	s.Client().Handle(wsproto.VCPManifestResponse{RequestID: g.RequestID, Plugins: []wsproto.VCPPlugin{{Name: "Calc"}, {Name: "Mine"}}})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the node was never told of the new list")
	}
	if st := s.Client().Status().State; st == bridge.StateOffered {
		t.Fatalf("state %q before any commit took the list in", st)
	}

	// A pass that is refused (another source's error) ends the wait too:
	// the previous tools stay, and the client does not hang.
	p, err = s.Prepare(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	p.Discard()
	if !testwait.Poll(ctx, func() bool { return s.Client().Status().State == bridge.StateOffered }) {
		t.Fatalf("never offered after a refused pass: %+v", s.Client().Status())
	}
	if len(s.Tools()) != 0 {
		t.Fatalf("a refused pass put tools in force: %v", s.Tools())
	}

	p, err = s.Prepare(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	warnings := p.Commit(func(name string) bool { return name == "vcp_Mine" })
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Spec().Name)
	}
	if !slices.Equal(names, []string{"vcp_Calc"}) {
		t.Errorf("tools = %v, want vcp_Calc alone", names)
	}
	want := "the server's tool vcp_Mine is not offered: this machine has a tool of that name"
	if !slices.Equal(warnings, []string{want}) {
		t.Errorf("warnings = %q", warnings)
	}
	var st controlapi.StatusResponse
	s.Status(&st)
	if st.ServerTools == nil || st.ServerTools.Tools != 2 || !slices.Equal(st.ServerTools.Warnings, []string{want}) ||
		!strings.Contains(st.ServerTools.State, "offered") {
		t.Errorf("status = %+v", st.ServerTools)
	}
}
