package node

import (
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// The server broadcasts an approval request once, to the VCPlog clients
// connected at that moment, and forgets its replay state when it restarts.
// A chat that calls one of this node's tools right after a restart must
// find the node's VCPlog observer back: the node registers its tools only
// then. Here the observer's own schedule would wait an hour, as a channel
// deep in backoff does.
func TestApprovalRightAfterRestartIsNotMissed(t *testing.T) {
	t.Parallel()
	slow := hourRetries()
	h := startHarness(t, harnessOpt{
		config: func(c *config.Config) {
			c.Node.Mode = config.ModeBoth
			c.Observer.Channels = []string{"VCPlog"}
		},
		timings: func(tm *timings) { tm.observerRetry = &slow },
	})
	h.accept()
	h.acceptObserver(demohub.ChannelVCPLog)
	if !testwait.Poll(h.ctx, func() bool {
		obs := h.node.ObserverStatuses()
		return len(obs) == 1 && obs[0].Phase == PhaseConnected
	}) {
		t.Fatal("the VCPlog observer never connected")
	}

	if err := h.hub.Restart(h.ctx); err != nil {
		t.Fatal(err)
	}
	c := h.accept()
	if _, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools); err != nil {
		t.Fatal(err)
	}
	// The moment the server has the tools, a chat calls one that needs approval.
	id, err := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Echo", Args: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	listed := func() bool {
		for _, a := range h.node.obs.Pending() {
			if a.RequestID == id {
				return true
			}
		}
		return false
	}
	// A broadcast reaches a connected observer in milliseconds; one the
	// observer missed never comes, so the test's own patience tells the
	// two apart, also on a loaded machine.
	if !testwait.Poll(h.ctx, listed) {
		t.Fatalf("the approval request sent as the node registered never reached `vcpnode approvals` (observers: %+v)", h.node.ObserverStatuses())
	}
}
