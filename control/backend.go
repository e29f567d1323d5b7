package control

import (
	"context"
	"net/http"

	"github.com/vcpnode/vcpnode/controlapi"
)

// Backend is the daemon as the control API sees it; the node implements
// it, and tests drive every handler with a fake. An error that carries a
// status code is a *controlapi.APIError; any other error is answered with
// the endpoint's default code.
type Backend interface {
	// Status is the daemon's part of GET /v1/status: the server fills in
	// Version, ConfigFile, Socket and Metrics.
	Status() controlapi.StatusResponse
	ToolStatuses() controlapi.ToolsResponse
	// Prompt renders the exposed tools in a format of textproto.PromptFormats.
	Prompt(format string) (controlapi.PromptResponse, error)
	Placeholders() controlapi.PlaceholdersResponse
	// Call runs a call for the owner; ctx ends when the client goes away.
	Call(ctx context.Context, req controlapi.CallRequest) (controlapi.CallResponse, error)
	MCPTools() []controlapi.MCPTool
	// ServerTools lists the VCP server's own tools; with refresh it asks
	// the server again first (ctx bounds the wait).
	ServerTools(ctx context.Context, refresh bool) controlapi.ServerToolsResponse
	// ReloadFile re-reads and applies the config file at path.
	ReloadFile(path string) (controlapi.ReloadReport, error)
	Phase() controlapi.Phase
	// Reconnect cuts a backoff wait short.
	Reconnect()
	// Register lets the tools held back by [node] register = false be registered.
	Register() (controlapi.RegisterResponse, error)
	PendingApprovals() []controlapi.ApprovalStatus
	// Decide answers a pending call; with req.Always it first remembers
	// the answer as a rule (the response's Rule).
	Decide(id string, approve bool, req controlapi.DecisionRequest) (controlapi.DecisionResponse, error)
	ApprovalRules() controlapi.ApprovalRulesResponse
	ForgetRule(id string) (controlapi.ForgetRuleResponse, error)
	ToolOverride(name string, req controlapi.ToolOverrideRequest) (controlapi.ToolOverrideResponse, error)
	// SubscribeEvents follows the daemon's events: start is the last id
	// published when the stream began, next waits for more (and counts
	// those this reader lost), cancel ends the subscription.
	SubscribeEvents(backlog bool, since uint64) (start uint64,
		next func(ctx context.Context, stop <-chan struct{}) ([]controlapi.Event, int, error), cancel func())
}

// MetricsSource serves the daemon's metrics.
type MetricsSource interface {
	MetricsHandler() http.Handler
}
