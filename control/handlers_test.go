package control

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// TestEveryHandlerOverAFakeBackend drives each /v1/ endpoint through the
// socket and the client, with a backend that is no node.
func TestEveryHandlerOverAFakeBackend(t *testing.T) {
	h := startFake(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	srv, c := h.serve(t, good)
	ctx := h.ctx

	st, err := c.Status(ctx)
	if err != nil || st.Name != "fake" || st.Version != "1.2.3-test" || st.Socket != srv.Socket() || st.ConfigFile != good || st.PID != os.Getpid() {
		t.Errorf("Status = %+v, %v", st, err)
	}
	if tools, err := c.Tools(ctx); err != nil || len(tools) != 1 || tools[0].Name != "Echo" {
		t.Errorf("Tools = %+v, %v", tools, err)
	}
	if p, err := c.Prompt(ctx, "xml"); err != nil || p.Format != "xml" || p.Tools != 1 {
		t.Errorf("Prompt(xml) = %+v, %v", p, err)
	}
	var api *controlapi.APIError
	if _, err := c.Prompt(ctx, "yaml"); !errors.As(err, &api) || api.Status != http.StatusBadRequest {
		t.Errorf("Prompt(yaml) = %v, want 400", err)
	}
	if ph, err := c.Placeholders(ctx); err != nil || len(ph.Placeholders) != 1 || ph.Placeholders[0].Key != "{{Fake}}" {
		t.Errorf("Placeholders = %+v, %v", ph, err)
	}
	if res, err := c.Call(ctx, controlapi.CallRequest{Tool: "Echo"}); err != nil || !res.OK || string(res.Result) != `"hi"` {
		t.Errorf("Call(Echo) = %+v, %v", res, err)
	}
	if _, err := c.Call(ctx, controlapi.CallRequest{Tool: "Nope"}); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("Call(Nope) = %v, want the backend's 404", err)
	}
	if _, err := c.Call(ctx, controlapi.CallRequest{Tool: "Echo", Via: "carrier-pigeon"}); !errors.As(err, &api) || api.Status != http.StatusBadRequest {
		t.Errorf("Call via a stranger = %v, want 400", err)
	}
	if _, err := c.Call(ctx, controlapi.CallRequest{}); !errors.As(err, &api) || api.Status != http.StatusBadRequest {
		t.Errorf("Call without a tool = %v, want 400", err)
	}
	if n, _ := h.b.seen(); n != 2 {
		t.Errorf("the backend saw %d calls, want 2 (the bad requests stop at the handler)", n)
	}
	if tools, err := c.MCPTools(ctx); err != nil || len(tools) != 1 || tools[0].Name != "Echo" {
		t.Errorf("MCPTools = %+v, %v", tools, err)
	}
	if rep, err := c.Reload(ctx); err != nil || rep.ConfigFile != good || strings.Join(rep.Changed, ",") != "tools" {
		t.Errorf("Reload = %+v, %v", rep, err)
	}

	// Reconnect asks the backend only while it backs off.
	if rc, err := c.Reconnect(ctx); err != nil || rc.Reconnecting {
		t.Errorf("Reconnect while connected = %+v, %v", rc, err)
	}
	if _, n := h.b.seen(); n != 0 {
		t.Errorf("%d reconnects while connected", n)
	}
	h.b.mu.Lock()
	h.b.phase = controlapi.PhaseBackoff
	h.b.mu.Unlock()
	if rc, err := c.Reconnect(ctx); err != nil || !rc.Reconnecting {
		t.Errorf("Reconnect while backing off = %+v, %v", rc, err)
	}
	if _, n := h.b.seen(); n != 1 {
		t.Errorf("%d reconnects while backing off, want 1", n)
	}
	h.b.mu.Lock()
	h.b.phase = controlapi.PhaseStopping
	h.b.mu.Unlock()
	if _, err := c.Reconnect(ctx); !errors.As(err, &api) || api.Status != http.StatusServiceUnavailable {
		t.Errorf("Reconnect while stopping = %v, want 503", err)
	}

	if ap, err := c.Approvals(ctx); err != nil || len(ap.Pending) != 1 || ap.Pending[0].ID != "1" {
		t.Errorf("Approvals = %+v, %v", ap, err)
	}
	if d, err := c.Decide(ctx, "1", true, ""); err != nil || d.Decision != controlapi.DecisionApprove || d.Approval.ID != "1" {
		t.Errorf("Decide(1) = %+v, %v", d, err)
	}
	if _, err := c.Decide(ctx, "7", false, "no"); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("Decide(7) = %v, want 404 by default", err)
	}
	if d, err := c.DecideWith(ctx, "1", false, controlapi.DecisionRequest{Always: true}); err != nil || d.Decision != controlapi.DecisionDeny || d.Rule == nil {
		t.Errorf("Decide(1, always) = %+v, %v", d, err)
	}
	if rs, err := c.ApprovalRules(ctx); err != nil || len(rs.Rules) != 1 || rs.Rules[0].ID != "Echo" {
		t.Errorf("ApprovalRules = %+v, %v", rs, err)
	}
	if f, err := c.ForgetRule(ctx, "Echo"); err != nil || f.Rule.ID != "Echo" {
		t.Errorf("ForgetRule(Echo) = %+v, %v", f, err)
	}
	if _, err := c.ForgetRule(ctx, "Nope"); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("ForgetRule(Nope) = %v, want 404 by default", err)
	}
	if _, err := c.ForgetRule(ctx, ""); !errors.As(err, &api) || api.Status != http.StatusBadRequest || !strings.Contains(api.Message, "no rule named") {
		t.Errorf("ForgetRule() = %v, want 400", err)
	}

	var ov controlapi.ToolOverrideResponse
	no := false
	if err := c.Do(ctx, http.MethodPost, "/v1/tools/Echo/override", controlapi.ToolOverrideRequest{Expose: &no}, &ov); err != nil || ov.Tool != "Echo" {
		t.Errorf("override Echo = %+v, %v", ov, err)
	}
	if err := c.Do(ctx, http.MethodPost, "/v1/tools/Nope/override", controlapi.ToolOverrideRequest{Expose: &no}, &ov); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("override Nope = %v, want 404", err)
	}

	var parsed controlapi.ParseResponse
	reply := "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」\n<<<[END_TOOL_REQUEST]>>>"
	if err := c.Do(ctx, http.MethodPost, controlapi.PathParse, controlapi.ParseRequest{Text: reply}, &parsed); err != nil || len(parsed.Calls) != 1 {
		t.Errorf("parse = %+v, %v", parsed, err)
	}
	var written controlapi.ResultsResponse
	answers := controlapi.ResultsRequest{Format: "vcp", Results: []controlapi.CallAnswer{{ID: "c1", Response: controlapi.CallResponse{Tool: "Echo", OK: true, Result: []byte(`"hi"`)}}}}
	if err := c.Do(ctx, http.MethodPost, controlapi.PathResults, answers, &written); err != nil ||
		written.Text != "<<<[TOOL_RESULT]>>>\ntool_name:「始」Echo「末」\nrequest_id:「始」c1「末」\nstatus:「始」success「末」\ncontent:「始」hi「末」\n<<<[END_TOOL_RESULT]>>>" {
		t.Errorf("results = %+v, %v", written, err)
	}
	answers.Format = "yaml"
	if err := c.Do(ctx, http.MethodPost, controlapi.PathResults, answers, &written); !errors.As(err, &api) || api.Status != http.StatusBadRequest {
		t.Errorf("results in yaml = %v, want 400", err)
	}

	if _, err := c.ConsoleLogin(ctx); !errors.As(err, &api) || api.Status != http.StatusConflict {
		t.Errorf("ConsoleLogin without a console = %v, want 409", err)
	}

	// Events: the stream starts at the backend's last id, then passes on
	// what the backend publishes, filtered.
	h.b.events <- controlapi.Event{ID: 42, Kind: controlapi.EventInfo, Source: controlapi.EventSourceServer}
	h.b.events <- controlapi.Event{ID: 43, Kind: controlapi.EventCallEnd, Source: controlapi.EventSourceNode, Tool: "Echo"}
	var got []controlapi.Event
	ectx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = c.Events(ectx, controlapi.EventsQuery{EventFilter: controlapi.EventFilter{Source: controlapi.EventSourceNode}}, func(ev controlapi.Event) error {
		got = append(got, ev)
		if ev.ID == 43 {
			return io.EOF
		}
		return nil
	})
	if !errors.Is(err, io.EOF) || len(got) != 2 || got[0].Kind != controlapi.EventStreamStart || got[0].ID != 41 || got[1].Tool != "Echo" {
		t.Errorf("Events = %+v, %v", got, err)
	}
}

func TestReloadFailureIsUnprocessable(t *testing.T) {
	h := startFake(t)
	_, c := h.serve(t, filepath.Join(t.TempDir(), "bad.toml"))
	var api *controlapi.APIError
	if _, err := c.Reload(h.ctx); !errors.As(err, &api) || api.Status != http.StatusUnprocessableEntity {
		t.Errorf("Reload of a bad file = %v, want 422", err)
	}
	_, c = h.serve(t, "")
	if _, err := c.Reload(h.ctx); !errors.As(err, &api) || api.Status != http.StatusConflict {
		t.Errorf("Reload without a config file = %v, want 409", err)
	}
}
