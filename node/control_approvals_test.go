package node

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// argSecret is an argument value that must never reach the log.
const argSecret = "arg-value-not-for-the-log"

func TestApprovalsThroughTheHub(t *testing.T) {
	approve := func(t *testing.T, h *harness, c *controlapi.ControlClient, id string) {
		res, err := c.Decide(h.ctx, id, true, "ignored when approving")
		if err != nil || res.Decision != controlapi.DecisionApprove || res.Approval.ID != id || res.Approval.Tool != "Echo" {
			t.Fatalf("approve = %+v, %v", res, err)
		}
	}
	deny := func(t *testing.T, h *harness, c *controlapi.ControlClient, id string) {
		if res, err := c.Decide(h.ctx, id, false, "not today"); err != nil || res.Decision != controlapi.DecisionDeny {
			t.Fatalf("deny = %+v, %v", res, err)
		}
	}
	tests := []struct {
		name     string
		tool     config.ToolConfig
		decide   func(*testing.T, *harness, *controlapi.ControlClient, string) // nil: nobody answers
		status   string
		want     string // the result text or the error the server gets
		decision string // in the "call finished" log line
	}{
		{"approved", config.ToolConfig{Approval: "ask"}, approve, wsproto.StatusSuccess, argSecret, "approved"},
		{"denied", config.ToolConfig{Approval: "ask"}, deny, wsproto.StatusError, `tool "Echo" denied by the node's owner: not today`, "denied"},
		{"not approved in time", config.ToolConfig{Approval: "ask", ApprovalTimeout: config.Duration(time.Second)}, nil,
			wsproto.StatusError, `tool "Echo" not approved within 1s by the node's owner`, "expired"},
		{"always refused", config.ToolConfig{Approval: "deny"}, nil, wsproto.StatusError, `tool "Echo" refused by the node's owner`, "refused"},
		{"auto", config.ToolConfig{}, nil, wsproto.StatusSuccess, argSecret, "auto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startHarness(t, harnessOpt{config: func(c *config.Config) { c.Tools = map[string]config.ToolConfig{"Echo": tt.tool} }})
			conn := h.accept()
			_, client := startControl(t, h, "")
			result := asyncCall(h, conn, "r-1", "Echo", map[string]string{"message": argSecret})

			if tt.tool.Approval == "ask" && tt.decide == nil {
				// Nobody answers: the second it waits may be over before a
				// loaded machine looks, so only its end is checked.
				defer func() {
					var api *controlapi.APIError
					if _, err := client.Decide(h.ctx, "1", true, ""); !errors.As(err, &api) || api.Status != http.StatusNotFound {
						t.Errorf("deciding the expired approval = %v, want HTTP 404", err)
					}
				}()
			}
			if tt.tool.Approval == "ask" && tt.decide != nil {
				h.waitPending(1)
				list, err := client.Approvals(h.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(list.Pending) != 1 {
					t.Fatalf("pending = %+v", list.Pending)
				}
				p := list.Pending[0]
				if p.RequestID != "r-1" || p.Tool != "Echo" || string(p.Args["message"]) != `"`+argSecret+`"` ||
					!p.Expires.After(p.Requested) || list.Now.Before(p.Requested) {
					t.Errorf("pending approval = %+v", p)
				}
				st, err := client.Status(h.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.PendingApprovals != 1 || len(st.InFlight) != 1 || st.InFlight[0].State != controlapi.CallAwaitingApproval {
					t.Errorf("status = %d pending, in flight %+v", st.PendingApprovals, st.InFlight)
				}
				tt.decide(t, h, client, p.ID)
				defer func() {
					// Decided, the id is gone.
					_, err := client.Decide(h.ctx, p.ID, true, "")
					var api *controlapi.APIError
					if !errors.As(err, &api) || api.Status != http.StatusNotFound {
						t.Errorf("deciding again = %v, want HTTP 404", err)
					}
				}()
			}
			res := waitResult(h, result)
			got := res.Error
			if res.Status == wsproto.StatusSuccess {
				got = firstText(t, res)
			}
			if res.Status != tt.status || !strings.Contains(got, tt.want) {
				t.Fatalf("result = %+v, want %s %q", res, tt.status, tt.want)
			}
			h.waitLog(`"approval":"` + tt.decision + `"`)
			if strings.Contains(h.logs.String(), argSecret) {
				t.Errorf("an argument value reached the log:\n%s", h.logs)
			}
		})
	}
}

func TestApprovalHeldCallStopsWithTheNode(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask"}}
		c.Node.ShutdownGrace = config.Duration(time.Hour) // the held call must not wait for it
	}})
	conn := h.accept()
	result := asyncCall(h, conn, "r-1", "Echo", nil)
	h.waitPending(1)
	stopped := make(chan error, 1)
	go func() { stopped <- h.shutdown() }()
	if res := waitResult(h, result); res.Status != wsproto.StatusError || res.Error != "node is shutting down" {
		t.Errorf("result = %+v", res)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-h.ctx.Done():
		t.Fatal("the node waited for a call held for approval")
	}
}
