package controlapi

import (
	"encoding/json"
	"time"

	"github.com/vcpnode/vcpnode/config"
)

// The paths of the control API. Errors are ErrorResponse with a
// meaningful status code.
const (
	PathStatus    = "/v1/status"
	PathTools     = "/v1/tools"
	PathCall      = "/v1/call"
	PathReload    = "/v1/reload"
	PathReconnect = "/v1/reconnect"
	// PathRegister sends the tools held back by [node] register = false.
	PathRegister  = "/v1/register"
	PathApprovals = "/v1/approvals"
	PathEvents    = "/v1/events"
	// PathConsoleLogin mints a one-time web console login URL.
	PathConsoleLogin = "/v1/console/login"
	// PathToolOverride changes one tool's console switches.
	PathToolOverride = "/v1/tools/{name}/override"
	// PathPrompt renders the exposed tools as a model is told about them.
	PathPrompt = "/v1/prompt"
	// PathPlaceholders lists the placeholders: PlaceholdersResponse.
	PathPlaceholders = "/v1/placeholders"
	// PathParse finds the tool calls in a model's reply, as `vcpnode
	// parse` does; the console's Parser page runs them through PathCall.
	PathParse = "/v1/parse"
	// PathResults writes calls' answers as the model reads them back:
	// ResultsRequest, ResultsResponse.
	PathResults = "/v1/results"
	// PathMCPTools lists the tools `vcpnode mcp` offers to MCP clients.
	PathMCPTools = "/v1/mcp/tools"
)

// ViaMCP is CallRequest.Via for a call from `vcpnode mcp`.
const ViaMCP = "mcp"

// StatusResponse is GET /v1/status.
type StatusResponse struct {
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	// Now is the daemon's clock, so that ages are computed against it.
	Now  time.Time `json:"now"`
	Name string    `json:"name"`
	// HubURL is the hub endpoint with the key redacted.
	HubURL     string `json:"hubUrl"`
	ConfigFile string `json:"configFile,omitempty"`
	Socket     string `json:"socket"`
	Metrics    string `json:"metrics,omitempty"` // address of /metrics when served
	// Mode is [node] mode in force: "distributed", "observer" or "both".
	Mode       string           `json:"mode"`
	Connection ConnectionStatus `json:"connection"`
	Tools      ToolCounts       `json:"tools"`
	InFlight   []InFlightStatus `json:"inFlight"`
	// PendingApprovals counts calls awaiting `vcpnode approve`.
	PendingApprovals int `json:"pendingApprovals"`
	// Placeholders counts the {{placeholders}} this node feeds the server.
	Placeholders int `json:"placeholders"`
	// PlaceholderErrors counts placeholders whose last refresh failed (a
	// static plugin's error answer, a failing command).
	PlaceholderErrors int `json:"placeholderErrors"`
	// Observers are the observer connections ([observer] enabled).
	Observers []ObserverStatus `json:"observers,omitempty"`
	// MCPServers are the [mcp.servers] this daemon runs, by name.
	MCPServers []MCPServerStatus `json:"mcpServers,omitempty"`
	// Sandbox is how tools' processes are confined (sandbox.go).
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
	// PluginChanges say, for the last plugin scan, each plugin whose
	// manifest changed its name, pluginType or entryPoint since its folder
	// was first seen (it keeps its first name and settings).
	PluginChanges []string `json:"pluginChanges,omitempty"`
	// Plugins are the plugin processes now and the warm interpreters.
	Plugins PluginsStatus `json:"plugins"`
	// ServerTools is where the node stands with the server's own tools
	// (its VCPToolBridge); nil in observer mode.
	ServerTools *ServerToolsStatus `json:"serverTools,omitempty"`
	// ServerNames maps each exposed tool that [node] tool_names or
	// [tools.NAME] name renames to the name the server knows it by.
	ServerNames map[string]string `json:"serverNames,omitempty"`
	// Sources are the tool sources added to the node (toolsource.Source)
	// that report a state of their own.
	Sources []ToolSourceStatus `json:"sources,omitempty"`
}

// ToolSourceStatus is one tool source's line of `vcpnode status`.
type ToolSourceStatus struct {
	Name string `json:"name"`
	// Summary is the source's state in a few words, as status shows it.
	Summary string `json:"summary"`
}

// PluginsStatus counts plugin processes. A warm interpreter waiting for a
// call is no call: it is in WarmWaiting, not in Calls.
type PluginsStatus struct {
	// Calls counts plugin processes running a call, asynchronous ones
	// still working after their answer included.
	Calls int `json:"calls"`
	// WarmWaiting counts interpreters waiting for a call, over every pool.
	WarmWaiting int `json:"warmWaiting"`
	// WarmCalls counts calls a warm interpreter ran since the start.
	WarmCalls uint64 `json:"warmCalls"`
	// Warm are the plugins that keep interpreters waiting ([plugins.warm]).
	Warm []WarmPoolStatus `json:"warm,omitempty"`
}

// WarmPoolStatus is one plugin's warm pool.
type WarmPoolStatus struct {
	Plugin  string `json:"plugin"`
	Waiting int    `json:"waiting"`
	Size    int    `json:"size"`
	// Cold: its interpreters kept ending before a call took them; the pool
	// gave up and the plugin runs cold until the next reload.
	Cold bool `json:"cold,omitempty"`
}

// Phase is where a connection's reconnect loop is.
type Phase string

// Phases of a connection, as shown by `vcpnode status`.
const (
	PhaseConnecting Phase = "connecting"
	PhaseConnected  Phase = "connected"
	PhaseBackoff    Phase = "backoff"
	PhaseStopping   Phase = "stopping"
	PhaseStopped    Phase = "stopped"
)

// ConnectionStatus is the hub connection as the reconnect loop sees it:
// the node keeps its state in this type and the CLI and the console read
// it as sent. Times that are not set are left out of the JSON.
type ConnectionStatus struct {
	Phase Phase     `json:"phase"`
	Since time.Time `json:"since"`
	// ServerID is from the last connection_ack (empty on old servers).
	ServerID string `json:"serverId,omitempty"`
	// Attempt counts failed attempts since the last good session.
	Attempt int `json:"attempt,omitempty"`
	// RetryAt is when the next attempt starts, while backing off.
	RetryAt   time.Time `json:"retryAt,omitzero"`
	LastError string    `json:"lastError,omitempty"`
	// LastErrorAt is when LastError happened; a LastError older than
	// Since while connected is from before the current connection.
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// LastErrorEarlier: LastError belongs to an earlier connection (or
	// its attempts), not to the current one.
	LastErrorEarlier bool `json:"lastErrorEarlier,omitempty"`
	// HandshakesDropped counts the attempts in a row whose handshake the
	// server dropped before any HTTP answer: a wrong key or path, a proxy,
	// or a restarting server. The node then backs off to a minute.
	HandshakesDropped int `json:"handshakesDropped,omitempty"`
	// DisconnectedAt is when the connection dropped (or the daemon
	// started); absent while connected.
	DisconnectedAt time.Time `json:"disconnectedAt,omitzero"`
	// Registered: connected, with the tools sent to the server.
	Registered bool `json:"registered"`
	// ToolsHeld: [node] register = false and `vcpnode register` not yet
	// run: a connection sends no register_tools.
	ToolsHeld  bool `json:"toolsHeld,omitempty"`
	Sessions   int  `json:"sessions"`
	Reconnects int  `json:"reconnects"`
	// Auth is how the connection in place (or the last) carried the key:
	// "header" (Authorization on the key-less path) or "path".
	Auth string `json:"auth,omitempty"`
	// AuthRemembered: [hub] auth = "auto" took the way remembered in the
	// state directory from an earlier run, and it worked at the first try.
	AuthRemembered bool `json:"authRemembered,omitempty"`
}

// ObserverStatus is one observer connection as `vcpnode status` shows it.
type ObserverStatus struct {
	Channel   string     `json:"channel"`
	Phase     Phase      `json:"phase"`
	Since     time.Time  `json:"since"`
	Attempt   int        `json:"attempt,omitempty"`
	RetryAt   *time.Time `json:"retryAt,omitempty"`
	LastError string     `json:"lastError,omitempty"`
	Sessions  int        `json:"sessions"`
	// Auth is how the connection carried the key: "header" or "path".
	Auth string `json:"auth,omitempty"`
}

// MCPServerStatus is one [mcp.servers.NAME] in GET /v1/status.
type MCPServerStatus struct {
	Name      string    `json:"name"`
	Tool      string    `json:"tool"`
	Transport string    `json:"transport"`         // "stdio" or "http"
	State     string    `json:"state"`             // starting, running, restarting, stopped
	Since     time.Time `json:"since"`             // when it entered State
	Tools     int       `json:"tools"`             // MCP tools offered, from its last listing
	Restarts  int       `json:"restarts"`          // since the daemon started it
	Attempt   int       `json:"attempt,omitempty"` // failed starts in a row
	// RetryAt is when the next start is tried, while restarting.
	RetryAt *time.Time `json:"retryAt,omitempty"`
	// LastError is why it is not running (its last stderr line or exit),
	// one line, key redacted.
	LastError string `json:"lastError,omitempty"`
	// StartBudget is how long the start under way may take, when longer
	// than usual (a package runner's first start), and why.
	StartBudget string `json:"startBudget,omitempty"`
}

// ToolCounts sums up the registered tools under the current policy.
type ToolCounts struct {
	Registered int `json:"registered"`
	Exposed    int `json:"exposed"`
	Hidden     int `json:"hidden"`
	// Unsupported counts plugin folders that cannot run here (direct-protocol
	// types), Invalid those whose manifest was refused.
	Unsupported int `json:"unsupported"`
	Invalid     int `json:"invalid"`
}

// States of an in-flight call.
const (
	CallRunning          = "running"
	CallQueued           = "queued"
	CallAwaitingApproval = "awaiting_approval"
)

// InFlightStatus is one call accepted and not yet answered.
type InFlightStatus struct {
	RequestID string    `json:"requestId"`
	Tool      string    `json:"tool"`
	Started   time.Time `json:"started"`
	Deadline  time.Time `json:"deadline"`
	State     string    `json:"state"` // CallRunning, CallQueued or CallAwaitingApproval
	Local     bool      `json:"local,omitempty"`
}

// ToolStatus is one registered tool for GET /v1/tools.
type ToolStatus struct {
	// ServerName is the name the server knows the tool by, when [node]
	// tool_names or [tools.NAME] name give it another.
	ServerName  string `json:"serverName,omitempty"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Source      string `json:"source,omitempty"`
	Builtin     bool   `json:"builtin,omitempty"`
	// Implicit tools are called by name and never registered (internal_request_file).
	Implicit bool `json:"implicit,omitempty"`
	// Aliases are other names calls may use for the tool; it is registered
	// under Name only.
	Aliases []string `json:"aliases,omitempty"`
	Exposed bool     `json:"exposed"`
	// Reason says why the tool is exposed or not.
	Reason        string `json:"reason"`
	TimeoutMs     int64  `json:"timeoutMs"`
	MaxConcurrent int    `json:"maxConcurrent,omitempty"`
	// Approval is "auto", "ask" or "deny"; ApprovalTimeoutMs is set for "ask".
	Approval          string `json:"approval"`
	ApprovalTimeoutMs int64  `json:"approvalTimeoutMs,omitempty"`
	// Skipped is set for a plugin folder that is not run as a tool: "static",
	// "service" (a running direct service plugin), "unsupported", "invalid",
	// "duplicate" or "disabled" (Reason says why).
	Skipped string `json:"skipped,omitempty"`
	// State is the MCP server's state for a tool from [mcp.servers]
	// ("starting", "running", "restarting"); a server that never listed
	// its tools has no registered tool and is listed with Skipped = State.
	State string `json:"state,omitempty"`
	// Commands are the tool's invocation commands; typed ones list their
	// parameters.
	Commands []CommandStatus `json:"commands,omitempty"`
	// Override is set when console switches (config.OverridesFile) change
	// this tool's exposure or approval.
	Override *config.ToolOverride `json:"override,omitempty"`
	// Sandbox is the profile the tool's processes run under; empty for
	// built-in tools, which start none.
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxGrants are what the tool's last process got beyond its
	// profile from what it ran (sandbox.go); none before its first start.
	SandboxGrants []SandboxGrant `json:"sandboxGrants,omitempty"`
	// Call is a TOOL_REQUEST block calling the tool (its first command),
	// ready to edit; each command has its own in Commands.
	Call string `json:"call,omitempty"`
	// Calls counts the calls answered since the daemon started, the
	// owner's local ones included; LastCall is when the latest ended.
	Calls    uint64     `json:"calls,omitempty"`
	LastCall *time.Time `json:"lastCall,omitempty"`
}

// CommandStatus is one invocation command of a tool.
type CommandStatus struct {
	Command     string `json:"command,omitempty"`
	Description string `json:"description,omitempty"`
	Example     string `json:"example,omitempty"`
	// Typed commands have their arguments checked against Params.
	Typed  bool          `json:"typed,omitempty"`
	Params []ParamStatus `json:"params,omitempty"`
	// Call is a TOOL_REQUEST block calling this command, ready to edit
	// (textproto.CallTemplate): the console's "load into the executor".
	Call string `json:"call,omitempty"`
}

// ParamStatus is one parameter of a typed command (schema.Param).
type ParamStatus struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"`
	Required    bool              `json:"required,omitempty"`
	Enum        []json.RawMessage `json:"enum,omitempty"`
	Default     json.RawMessage   `json:"default,omitempty"`
	// Alias is the name the VCP text protocol uses when Name cannot be.
	Alias string `json:"alias,omitempty"`
}

// ToolsResponse is GET /v1/tools.
type ToolsResponse struct {
	Tools []ToolStatus `json:"tools"`
	// OverridesFile keeps the console's tool switches; empty when there is
	// no state directory (the switches are then unavailable).
	OverridesFile string `json:"overridesFile,omitempty"`
}

// CallRequest is POST /v1/call: run a tool locally, exposure policy and
// approval aside.
type CallRequest struct {
	Tool string                     `json:"tool"`
	Args map[string]json.RawMessage `json:"args,omitempty"`
	// Via is "mcp" for `vcpnode mcp`: only the tools offered to MCP
	// clients may be called, and the approval gate applies (see MCPTools).
	Via string `json:"via,omitempty"`
	// Progress asks for the call's progress as it comes (an asynchronous
	// server tool's task): the answer is then JSON lines, CallStreamLine.
	Progress bool `json:"progress,omitempty"`
}

// CallResponse is the outcome of a local call: what the server would have
// received in tool_result.
type CallResponse struct {
	RequestID string `json:"requestId"`
	Tool      string `json:"tool"`
	OK        bool   `json:"ok"`
	// Result is the tool_result's result on success.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the tool_result's error text on failure.
	Error string `json:"error,omitempty"`
	// Outcome is one word: "ok", "error", "timeout"…
	Outcome    string `json:"outcome"`
	DurationMs int64  `json:"durationMs"`
}

// ReloadResponse is POST /v1/reload.
type ReloadResponse struct {
	ConfigFile string `json:"configFile"`
	ReloadReport
}

// ReloadReport says what a reload changed.
type ReloadReport struct {
	// Changed lists the config sections that differ ("hub", "files", "tools"…).
	Changed []string `json:"changed"`
	// Reconnected is true when the node dropped its connection so the server
	// sees the new tool set or hub settings.
	Reconnected bool `json:"reconnected"`
	// RestartNeeded lists settings that only take effect after a restart.
	RestartNeeded []string `json:"restartNeeded,omitempty"`
	// Warnings are problems that did not stop the reload (a bad plugin, say).
	Warnings []string `json:"warnings,omitempty"`
}

// RegisterResponse is POST /v1/register.
type RegisterResponse struct {
	// Registering is true when the tools were held back until now.
	Registering bool   `json:"registering"`
	Message     string `json:"message"`
}

// ReconnectResponse is POST /v1/reconnect.
type ReconnectResponse struct {
	// Phase is the connection phase when the request arrived.
	Phase Phase `json:"phase"`
	// Reconnecting is true when a backoff wait was cut short.
	Reconnecting bool   `json:"reconnecting"`
	Message      string `json:"message"`
}

// Where a pending approval waits.
const (
	WaitsOnNode   = "node"   // this node holds the call (approval = "ask")
	WaitsOnServer = "server" // the server holds it (its manual approval)
)

// ApprovalStatus is a call awaiting the owner's approval.
type ApprovalStatus struct {
	// ID is what approve and deny take: a short number for this node's
	// calls, the server's requestId ("approve-…") for the server's.
	ID        string `json:"id"`
	RequestID string `json:"requestId"`
	Tool      string `json:"tool"`
	// Command is the command of the tool the call addresses, when it has
	// named commands: an "always" answer remembers it with the tool.
	Command   string                     `json:"command,omitempty"`
	Args      map[string]json.RawMessage `json:"args,omitempty"`
	Requested time.Time                  `json:"requested"`
	Expires   time.Time                  `json:"expires"`
	// Where is WaitsOnNode or WaitsOnServer.
	Where string `json:"where"`
	// Maid is the agent that asked (server approvals).
	Maid string `json:"maid,omitempty"`
	// TTLMs is the server's approvalTtlMs (server approvals).
	TTLMs int64 `json:"ttlMs,omitempty"`
}

// ApprovalsResponse is GET /v1/approvals.
type ApprovalsResponse struct {
	Now     time.Time        `json:"now"`
	Pending []ApprovalStatus `json:"pending"`
}

// DecisionRequest is the optional body of POST /v1/approvals/{id}/approve|deny.
type DecisionRequest struct {
	// Reason is added to the error the server sees when denying.
	Reason string `json:"reason,omitempty"`
	// Always remembers the answer for every later call of the tool (of
	// the call's command, when it has one) before answering this one:
	// ApprovalRule. Only for this node's own calls.
	Always bool `json:"always,omitempty"`
}

// Decisions a DecisionResponse reports.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// DecisionResponse is the answer to approve or deny.
type DecisionResponse struct {
	Decision string         `json:"decision"` // DecisionApprove or DecisionDeny
	Approval ApprovalStatus `json:"approval"`
	// Rule is the answer remembered (DecisionRequest.Always).
	Rule *ApprovalRule `json:"rule,omitempty"`
}

// ConsolePollHeader marks the console page's background polling, which
// does not count as use: an open tab nobody looks at still goes idle.
const ConsolePollHeader = "X-Vcpnode-Poll"

// ConsoleLoginResponse is POST /v1/console/login.
type ConsoleLoginResponse struct {
	// URL logs a browser in once; it expires unused at Expires.
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

// ErrorResponse is every error the control API returns.
type ErrorResponse struct {
	Error string `json:"error"`
}
