package toolhost

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Wire-manifest constants. The server requires a truthy pluginType and
// entryPoint but gives them no meaning for a remote tool (protocol.md §2.2.1).
const (
	manifestVersion = "1.0.0"
	// pluginType is never "static": the server runs the entryPoint command of
	// every static manifest, distributed or not (protocol.md §6). An
	// asynchronous plugin says so, as the official node sends its manifest;
	// the server only shows it (admin list, tool registry).
	wirePluginType      = "synchronous"
	wirePluginTypeAsync = "asynchronous"
	wireEntryType       = "remote"
	// wireProtocol is only shown in the server's admin summary. "direct" is
	// what protocol.md's example and the AIO node send; "stdio" would claim
	// the server spawns a process, which it never does for a node's tool.
	wireProtocol = "direct"
	// cloudPrefix is what the server puts before every distributed tool's displayName.
	cloudPrefix = "[云端]"

	// The server hands communication.timeout to setTimeout, which fires at
	// once for values above 2^31-1 ms; below 1s a call cannot even be sent back.
	minWireTimeout = time.Second
	maxWireTimeout = 2147483647 * time.Millisecond
)

// Manifest is the sanitized plugin manifest sent in register_tools. It is
// rebuilt from a Spec, never copied from a plugin's file, so it carries no
// basePath, config values, environment, or command to run.
type Manifest struct {
	ManifestVersion string         `json:"manifestVersion"`
	Name            string         `json:"name"`
	DisplayName     string         `json:"displayName"`
	Version         string         `json:"version,omitempty"`
	Description     string         `json:"description"`
	PluginType      string         `json:"pluginType"`
	EntryPoint      EntryPoint     `json:"entryPoint"`
	Communication   Communication  `json:"communication"`
	Capabilities    ManifestCaps   `json:"capabilities"`
	WebSocketPush   *WebSocketPush `json:"webSocketPush,omitempty"`
}

// EntryPoint is always {"type":"remote"}: present because the server drops
// manifests without one, and without a command so it can never be run there.
type EntryPoint struct {
	Type string `json:"type"`
}

// Communication carries the per-call timeout the server enforces, in whole milliseconds.
type Communication struct {
	Protocol string `json:"protocol"`
	Timeout  int64  `json:"timeout"`
}

// ManifestCaps holds the commands the model is told about.
type ManifestCaps struct {
	// InvocationCommands is never null: an empty list is sent as [].
	InvocationCommands []Command `json:"invocationCommands"`
}

// NewManifest builds the wire manifest for s, announcing timeout (normally
// Policy.Timeout(s)) clamped to what the server accepts. The displayName is
// sent without the "[云端]" prefix, which the server adds itself (a copy of
// it in the spec is removed); it defaults to the name. Commands keep their string fields as they are, including ones
// without a description (the server leaves those out of the prompt), except
// that a typed command without a description gets one, and an example,
// generated from its Schema (invocation.go).
func NewManifest(s Spec, timeout time.Duration) Manifest {
	display := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s.DisplayName), cloudPrefix))
	if display == "" {
		display = s.Name
	}
	cmds := make([]Command, len(s.Commands))
	for i, c := range s.Commands {
		cmds[i] = withInvocationText(s, c)
	}
	var push *WebSocketPush
	if s.WebSocketPush != nil {
		p := *s.WebSocketPush
		push = &p
	}
	pluginType := wirePluginType
	if s.Asynchronous {
		pluginType = wirePluginTypeAsync
	}
	return Manifest{
		ManifestVersion: manifestVersion,
		Name:            s.Name,
		DisplayName:     display,
		Version:         s.Version,
		Description:     s.Description,
		PluginType:      pluginType,
		EntryPoint:      EntryPoint{Type: wireEntryType},
		Communication:   Communication{Protocol: wireProtocol, Timeout: wireTimeoutMillis(timeout)},
		Capabilities:    ManifestCaps{InvocationCommands: cmds},
		WebSocketPush:   push,
	}
}

// WireManifest is NewManifest marshalled to JSON, ready for register_tools.
// "<", ">" and "&" are kept as they are (not \u003c…): invocation examples
// are full of "<<<[TOOL_REQUEST]>>>" and the server shows them verbatim.
func WireManifest(s Spec, timeout time.Duration) ([]byte, error) {
	b, err := marshalJSON(NewManifest(s, timeout))
	if err != nil {
		return nil, fmt.Errorf("marshal manifest of %q: %w", s.Name, err)
	}
	return b, nil
}

// wireTimeoutMillis clamps d to [1000, 2147483647] ms.
func wireTimeoutMillis(d time.Duration) int64 {
	return clampWireTimeout(d).Milliseconds()
}

func clampWireTimeout(d time.Duration) time.Duration {
	return min(max(d, minWireTimeout), maxWireTimeout)
}

// ToolInfo is one registered tool as the current policy sees it, for
// `vcpnode tools` and status output.
type ToolInfo struct {
	Spec     Spec
	Exposure Exposure
	// Timeout is the effective per-call timeout, as announced to the server.
	Timeout time.Duration
	// MaxConcurrent is the tool's own cap; 0 means only the global limit applies.
	MaxConcurrent int
}

// Tools lists every registered tool, sorted by name, with the current
// policy's decision, timeout and cap.
func (d *Dispatcher) Tools() []ToolInfo {
	view := d.view.Load()
	pol, entries := view.policy, view.reg.entries()
	out := make([]ToolInfo, len(entries))
	for i, e := range entries {
		out[i] = ToolInfo{
			Spec:          pol.visible(e.spec),
			Exposure:      pol.Decide(e.spec),
			Timeout:       clampWireTimeout(pol.Timeout(e.spec)),
			MaxConcurrent: pol.MaxConcurrent(e.spec.Name),
		}
	}
	return out
}

// Manifests returns the wire manifests of every exposed tool that the server
// calls through register_tools (Implicit tools are left out), sorted by
// name, with the current policy's timeouts. It is never nil: the server
// ignores a register_tools whose tools is not an array. The node compares
// successive results to decide when to reconnect (the server cannot update a
// registration).
func (d *Dispatcher) Manifests() ([]json.RawMessage, error) {
	view := d.view.Load()
	pol := view.policy
	out := []json.RawMessage{}
	for _, e := range view.reg.entries() {
		if e.spec.Implicit || !pol.Decide(e.spec).Exposed {
			continue
		}
		b, err := WireManifest(pol.visible(e.spec), pol.Timeout(e.spec))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
