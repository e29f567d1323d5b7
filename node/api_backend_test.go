package node

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// wantAPIError fails t unless err is an API error with status code.
func wantAPIError(t *testing.T, what string, err error, code int) {
	t.Helper()
	var api *controlapi.APIError
	if !errors.As(err, &api) || api.Status != code {
		t.Errorf("%s: %v, want HTTP %d", what, err, code)
	}
}

// The control API's backend routes the server's approvals (its observer
// channel) apart from this node's: listed with them, answered over the
// channel, never remembered, gone once answered; its event log streams
// them. (Through the control socket: observer/node_test.go.)
func TestBackendServerApprovals(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Observer.Enabled = true }})
	h.accept()
	h.acceptObserver(demohub.ChannelVCPLog)
	h.acceptObserver(demohub.ChannelVCPInfo)
	h.waitUntil("both observer channels", func() bool {
		obs := h.node.ObserverStatuses()
		return len(obs) == 2 && obs[0].Phase == PhaseConnected && obs[1].Phase == PhaseConnected
	})
	_, next, cancel := h.node.SubscribeEvents(false, 0)
	defer cancel()

	id, err := h.hub.RequestApproval(demohub.ApprovalRequest{ToolName: "Shell", Maid: "Nova", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for seen := false; !seen; {
		evs, _, err := next(h.ctx, nil)
		if err != nil {
			t.Fatalf("no approval event: %v", err)
		}
		for _, ev := range evs {
			seen = seen || ev.Kind == controlapi.EventApprovalRequest && ev.RequestID == id
		}
	}
	if p := h.node.PendingApprovals(); len(p) != 1 || p[0].ID != id || p[0].Where != controlapi.WaitsOnServer || p[0].Tool != "Shell" {
		t.Fatalf("pending = %+v", p)
	}
	if st := h.node.Status(); st.PendingApprovals != 1 {
		t.Errorf("status counts %d pending approvals", st.PendingApprovals)
	}
	_, err = h.node.Decide(id, true, controlapi.DecisionRequest{Always: true})
	wantAPIError(t, "always allow a server approval", err, http.StatusBadRequest)
	if _, err := h.node.Decide(id, false, controlapi.DecisionRequest{Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	if ans, err := h.hub.WaitApprovalAnswer(h.ctx, id); err != nil || ans.Approved || ans.Reason != "not now" {
		t.Fatalf("hub got %+v, %v", ans, err)
	}
	_, err = h.node.Decide(id, true, controlapi.DecisionRequest{})
	wantAPIError(t, "answer a server approval twice", err, http.StatusNotFound)
	if !testwait.Poll(h.ctx, func() bool { return len(h.node.PendingApprovals()) == 0 }) {
		t.Errorf("answered approval still listed: %+v", h.node.PendingApprovals())
	}
}

// In observer mode the backend has no session: nothing to register on, no
// server tools to reach.
func TestBackendInObserverMode(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.Mode = config.ModeObserver; c.Hub.Auth = "path" }})
	_, err := h.node.Register()
	wantAPIError(t, "register in observer mode", err, http.StatusConflict)
	if st := h.node.ServerTools(h.ctx, false); st.State != "disconnected" || len(st.Tools) != 0 {
		t.Errorf("server tools in observer mode: %+v", st)
	}
	// A call of a server tool says why there is none.
	_, err = h.node.Call(h.ctx, controlapi.CallRequest{Tool: "vcp_SciCalculator"})
	wantAPIError(t, "a server tool in observer mode", err, http.StatusNotFound)
	if !strings.Contains(err.Error(), `node.mode = "observer": no node connection, so no server tools`) {
		t.Errorf("a server tool in observer mode: %v", err)
	}
}

// Status names the tools the server knows by another name ([node]
// tool_names), and only the exposed ones.
func TestBackendStatusServerNames(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Node.ToolNames = "{tool}_{node}" }})
	got := h.node.Status().ServerNames
	if got["Echo"] != "Echo_test-node" {
		t.Errorf("server names = %v, want Echo as Echo_test-node", got)
	}
	if _, hidden := got["NodeInfo"]; hidden {
		t.Errorf("server names = %v name a hidden tool", got)
	}
}
