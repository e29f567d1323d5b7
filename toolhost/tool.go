package toolhost

import (
	"context"
	"encoding/json"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// DefaultTimeout is a tool's timeout when neither its manifest nor the config sets one.
const DefaultTimeout = 60 * time.Second

// Tool is something the node can run on the server's behalf.
type Tool interface {
	// Spec describes the tool; it must not change while the tool is registered.
	Spec() Spec
	// Invoke runs one call. The returned value must marshal to JSON; a plain
	// string is sent to the model as a text part. A non-nil error becomes an
	// error result whose text is err.Error(). Invoke must return soon after
	// ctx is done.
	Invoke(ctx context.Context, call Call) (any, error)
}

// Call is one invocation.
type Call struct {
	RequestID string
	// Args are the model's arguments, values kept as raw JSON (mostly strings).
	Args map[string]json.RawMessage
	// Context is the optional, opaque _vcpContext object (nil when absent).
	Context json.RawMessage
	// Local marks calls made by the node's owner (e.g. `vcpnode call`), not the server.
	Local bool
	// Streams says the caller writes a StreamResult to the wire itself
	// (Outcome.Stream); otherwise such a result arrives gathered in Result.
	Streams bool
	// Gated local calls still pass the owner's approval gate ("ask" waits
	// for `vcpnode approve`, "deny" refuses): calls from MCP clients, which
	// act for a model rather than for the owner at the keyboard.
	Gated bool
	// Origin groups the calls of one connection to the server, so that
	// they are let go together when it ends (Dispatcher.EndOrigin); nil
	// for calls of no connection.
	Origin *Origin
}

// Spec is what the node knows about a tool: the parts that may be sent to the
// server and the parts that steer local policy.
type Spec struct {
	Name        string
	DisplayName string
	Version     string
	Description string
	Commands    []Command
	// Timeout is the declared per-call timeout; zero means DefaultTimeout.
	Timeout time.Duration
	// Source tells where the tool came from, for status output ("builtin", a manifest path…).
	Source string
	// Builtin tools are not exposed unless the config names them.
	Builtin bool
	// DistributedExposed is false when a plugin manifest says "distributedExposed": false.
	DistributedExposed bool
	// FromServer tools are the VCP server's own, run through its bridge
	// (package bridge): offered on this machine only, never registered
	// with the server nor callable by it.
	FromServer bool
	// Implicit tools are called by the server by a fixed name without being
	// registered (internal_request_file); they are never put in register_tools.
	Implicit bool
	// MaxResultBytes, when positive, replaces the dispatcher's result cap for
	// this tool: a tool whose output is already bounded by its own option
	// (internal_request_file by [files] max_bytes) declares that bound here.
	MaxResultBytes int
	// WebSocketPush is copied to the wire manifest for asynchronous plugins.
	WebSocketPush *WebSocketPush
	// Asynchronous marks a plugin that answers at once and reports later
	// through its callback; it is registered as pluginType "asynchronous",
	// as the official node registers it.
	Asynchronous bool
	// Aliases are other names calls may use for the tool (the workspace
	// tools answer to the snake_case names of other tool schemes); it is registered, and
	// listed, under Name only. A registered tool's own name wins over an alias.
	Aliases []string
	// Approval is the tool's approval mode when [tools.NAME] approval is
	// unset; "" means ApprovalAuto. A tool that changes the machine (WriteFile)
	// asks by default.
	Approval ApprovalMode
}

// Command is one entry of capabilities.invocationCommands.
type Command struct {
	Command     string `json:"command,omitempty"`
	Description string `json:"description,omitempty"`
	Example     string `json:"example,omitempty"`
	// Schema makes the command typed: its arguments are checked and coerced
	// before Invoke. A tool with several typed commands selects one by the
	// "command" argument; a tool with one typed command uses it for every call.
	// Never sent as it is: the description and example are generated from it.
	Schema *schema.Schema `json:"-"`
}

// WebSocketPush is the manifest block that tells the server how to broadcast
// an asynchronous plugin's callback.
type WebSocketPush struct {
	Enabled          bool   `json:"enabled"`
	MessageType      string `json:"messageType,omitempty"`
	TargetClientType string `json:"targetClientType,omitempty"`
}
