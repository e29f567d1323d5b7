package control

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/controltest"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

// fakeBackend answers every Backend method from its fields, and records
// what the handlers asked of it.
type fakeBackend struct {
	mu         sync.Mutex
	phase      controlapi.Phase
	reconnects int
	calls      []controlapi.CallRequest
	decisions  []string
	overrides  []string // "name timeout" of each override asked for
	registers  int
	events     chan controlapi.Event
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{phase: controlapi.PhaseConnected, events: make(chan controlapi.Event, 8)}
}

var errFakeUnknown = &controlapi.APIError{Status: http.StatusNotFound, Message: "unknown tool \"Nope\""}

// seen is how many calls and reconnects the handlers asked for.
func (f *fakeBackend) seen() (calls, reconnects int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls), f.reconnects
}

func (f *fakeBackend) Status() controlapi.StatusResponse {
	return controlapi.StatusResponse{Name: "fake", HubURL: "ws://127.0.0.1:1/vcp-distributed-server/VCP_Key=***",
		Connection: controlapi.ConnectionStatus{Phase: f.Phase()}}
}

func (f *fakeBackend) ToolStatuses() controlapi.ToolsResponse {
	return controlapi.ToolsResponse{Tools: []controlapi.ToolStatus{{Name: "Echo", Exposed: true, Approval: "auto"}}}
}

func (f *fakeBackend) Prompt(format string) (controlapi.PromptResponse, error) {
	return controlapi.PromptResponse{Format: format, Tools: 1, Text: "Echo: says it back"}, nil
}

func (f *fakeBackend) Placeholders() controlapi.PlaceholdersResponse {
	return controlapi.PlaceholdersResponse{Placeholders: []controlapi.PlaceholderStatus{{Key: "{{Fake}}", Value: "v", HasValue: true}}}
}

func (f *fakeBackend) Call(_ context.Context, req controlapi.CallRequest) (controlapi.CallResponse, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req)
	f.mu.Unlock()
	if req.Tool != "Echo" {
		return controlapi.CallResponse{}, errFakeUnknown
	}
	return controlapi.CallResponse{RequestID: "local-1", Tool: req.Tool, OK: true, Outcome: "ok", Result: []byte(`"hi"`)}, nil
}

func (f *fakeBackend) ServerTools(context.Context, bool) controlapi.ServerToolsResponse {
	return controlapi.ServerToolsResponse{State: "none", Tools: []controlapi.ServerTool{}}
}

func (f *fakeBackend) MCPTools() []controlapi.MCPTool {
	return []controlapi.MCPTool{{Name: "Echo", Description: "says it back", InputSchema: []byte(`{"type":"object"}`)}}
}

func (f *fakeBackend) ReloadFile(path string) (controlapi.ReloadReport, error) {
	if filepath.Base(path) == "bad.toml" {
		return controlapi.ReloadReport{}, errors.New("reload: config not applied")
	}
	return controlapi.ReloadReport{Changed: []string{"tools"}}, nil
}

func (f *fakeBackend) Phase() controlapi.Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.phase
}

func (f *fakeBackend) Reconnect() {
	f.mu.Lock()
	f.reconnects++
	f.mu.Unlock()
}

func (f *fakeBackend) Register() (controlapi.RegisterResponse, error) {
	f.mu.Lock()
	f.registers++
	f.mu.Unlock()
	return controlapi.RegisterResponse{Registering: true, Message: "registering"}, nil
}

func (f *fakeBackend) PendingApprovals() []controlapi.ApprovalStatus {
	return []controlapi.ApprovalStatus{{ID: "1", Tool: "Echo", Where: controlapi.WaitsOnNode}}
}

func (f *fakeBackend) Decide(id string, approve bool, req controlapi.DecisionRequest) (controlapi.DecisionResponse, error) {
	f.mu.Lock()
	f.decisions = append(f.decisions, id)
	f.mu.Unlock()
	if id != "1" {
		return controlapi.DecisionResponse{}, errors.New("no pending approval with this id")
	}
	res := controlapi.DecisionResponse{Approval: controlapi.ApprovalStatus{ID: id, Tool: "Echo", Where: controlapi.WaitsOnNode}}
	if req.Always {
		res.Rule = &controlapi.ApprovalRule{ID: "Echo", Tool: "Echo", Verdict: controlapi.RuleAllow}
	}
	return res, nil
}

func (f *fakeBackend) ApprovalRules() controlapi.ApprovalRulesResponse {
	return controlapi.ApprovalRulesResponse{Rules: []controlapi.ApprovalRule{{ID: "Echo", Tool: "Echo", Verdict: controlapi.RuleAllow}}}
}

func (f *fakeBackend) ForgetRule(id string) (controlapi.ForgetRuleResponse, error) {
	f.mu.Lock()
	f.decisions = append(f.decisions, "forget "+id)
	f.mu.Unlock()
	if id != "Echo" {
		return controlapi.ForgetRuleResponse{}, errors.New("no approval rule with this id")
	}
	return controlapi.ForgetRuleResponse{Rule: controlapi.ApprovalRule{ID: "Echo", Tool: "Echo", Verdict: controlapi.RuleAllow}}, nil
}

func (f *fakeBackend) ToolOverride(name string, req controlapi.ToolOverrideRequest) (controlapi.ToolOverrideResponse, error) {
	f.mu.Lock()
	f.overrides = append(f.overrides, name+" "+req.Timeout)
	f.mu.Unlock()
	if name != "Echo" {
		return controlapi.ToolOverrideResponse{}, errFakeUnknown
	}
	return controlapi.ToolOverrideResponse{Tool: name, File: "/state/overrides.toml"}, nil
}

func (f *fakeBackend) SubscribeEvents(bool, uint64) (uint64, func(context.Context, <-chan struct{}) ([]controlapi.Event, int, error), func()) {
	next := func(ctx context.Context, stop <-chan struct{}) ([]controlapi.Event, int, error) {
		select {
		case ev := <-f.events:
			return []controlapi.Event{ev}, 0, nil
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-stop:
			return nil, 0, context.Canceled
		}
	}
	return 41, next, func() {}
}

// testDaemon is a control server over a fakeBackend.
type testDaemon struct {
	ctx context.Context
	b   *fakeBackend
	log zerolog.Logger
}

func startFake(t *testing.T) *testDaemon {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &testDaemon{ctx: ctx, b: newFakeBackend(), log: zerolog.New(zerolog.NewTestWriter(t))}
}

// serve starts a control server for h with configFile and returns a client.
func (h *testDaemon) serve(t *testing.T, configFile string) (*Server, *controlapi.ControlClient) {
	t.Helper()
	srv, err := Listen(h.ctx, h.b, Options{Socket: testnet.SocketPath(t), ConfigFile: configFile, Version: "1.2.3-test", Log: h.log})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	return srv, controltest.Connect(t, srv)
}
