package demohub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/wsproto"
)

// Bridge makes the hub answer the VCPToolBridge frames as the real
// server's plugin (Plugin/VCPToolBridge) does: get_vcp_manifests lists the
// server's own plugins that have invocation commands, minus the excluded
// ones and the distributed ones; execute_vcp_tool runs one by name (the
// exclusions are not checked there) and answers with vcp_tool_result; an
// answer carrying a taskId makes the task's progress (Hub.BridgeStatus) and
// late result (Hub.BridgeCallback) go to the connection that started it.
type Bridge struct {
	// Disabled is Bridge_Enabled=false: the frames reach the server's own
	// handler, which ignores types it does not know. No answer comes.
	Disabled bool
	// Plugins are the server's plugins, in the server's order.
	Plugins []BridgePlugin
	// ExcludedTools and ExcludedDisplayKeywords are the plugin's
	// Excluded_Tools and Excluded_Display_Keywords.
	ExcludedTools           []string
	ExcludedDisplayKeywords []string
	// Run runs a plugin the server has; a nil Run answers {"status":"success"}.
	// What it returns goes through the server's result handling (see
	// serverResult) as a plugin's answer does.
	// An error's text is what the server's plugin threw: JSON with
	// plugin_error or plugin_execution_error is unwrapped as the server does.
	// It runs on its own goroutine, with a context ended by Close.
	Run func(ctx context.Context, tool string, args map[string]json.RawMessage) (any, error)
}

// BridgePlugin is one of the server's plugins as its manifest says.
type BridgePlugin struct {
	Name        string
	DisplayName string
	Description string
	Version     string
	// Distributed plugins are other nodes' tools: never listed.
	Distributed bool
	// InvocationCommands are passed through whole, as the server does.
	InvocationCommands []map[string]any
}

// BridgeTaskError is what Run returns to throw a plain error text.
type BridgeTaskError string

func (e BridgeTaskError) Error() string { return string(e) }

// bridgeFrame answers a bridge frame when the hub has an enabled Bridge;
// it reports whether it took the frame.
func (c *Conn) bridgeFrame(m wsproto.Message) bool {
	b := c.hub.opts.Bridge
	if b == nil || b.Disabled {
		return false
	}
	switch m := m.(type) {
	case wsproto.GetVCPManifests:
		c.hub.goBridge(func(ctx context.Context) { c.bridgeList(ctx, b, m) })
	case wsproto.ExecuteVCPTool:
		c.hub.goBridge(func(ctx context.Context) { c.bridgeExecute(ctx, b, m) })
	default:
		return false
	}
	return true
}

func (h *Hub) goBridge(f func(ctx context.Context)) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.wg.Add(1)
	ctx := h.bridgeCtx
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		f(ctx)
	}()
}

func (c *Conn) bridgeList(ctx context.Context, b *Bridge, m wsproto.GetVCPManifests) {
	type exported struct {
		Name         string `json:"name"`
		DisplayName  string `json:"displayName"`
		Description  string `json:"description"`
		Version      string `json:"version"`
		Capabilities struct {
			InvocationCommands []map[string]any `json:"invocationCommands"`
		} `json:"capabilities"`
	}
	plugins := []exported{}
	for _, p := range c.hub.bridgePluginList() {
		if slices.Contains(b.ExcludedTools, p.Name) || p.Distributed ||
			p.DisplayName != "" && slices.ContainsFunc(b.ExcludedDisplayKeywords, func(kw string) bool { return strings.Contains(p.DisplayName, kw) }) ||
			len(p.InvocationCommands) == 0 {
			continue
		}
		e := exported{Name: p.Name, DisplayName: p.DisplayName, Description: p.Description, Version: p.Version}
		if e.DisplayName == "" {
			e.DisplayName = p.Name
		}
		if e.Version == "" {
			e.Version = "1.0.0"
		}
		e.Capabilities.InvocationCommands = p.InvocationCommands
		plugins = append(plugins, e)
	}
	c.sendBridge(ctx, wsproto.TypeVCPManifestResponse, map[string]any{"requestId": m.RequestID, "plugins": plugins, "vcpVersion": "1.0.0"})
}

func (c *Conn) bridgeExecute(ctx context.Context, b *Bridge, m wsproto.ExecuteVCPTool) {
	var (
		result any
		err    error
	)
	if !slices.ContainsFunc(c.hub.bridgePluginList(), func(p BridgePlugin) bool { return p.Name == m.ToolName }) {
		err = fmt.Errorf(`[PluginManager] Plugin "%s" not found for tool call.`, m.ToolName)
	} else if b.Run == nil {
		result = map[string]any{"status": "success"}
	} else {
		result, err = b.Run(ctx, m.ToolName, m.ToolArgs)
	}
	if err == nil {
		result, err = serverResult(m.ToolName, m.ToolArgs, result, time.Now())
	}
	if err != nil {
		c.sendBridge(ctx, wsproto.TypeVCPToolResult, map[string]any{"requestId": m.RequestID, "status": "error", "error": serverErrorText(err)})
		return
	}
	if task := taskOf(result); task != "" {
		c.hub.mu.Lock()
		if c.hub.bridgeTasks == nil {
			c.hub.bridgeTasks = map[string]*Conn{}
		}
		c.hub.bridgeTasks[task] = c
		c.hub.mu.Unlock()
	}
	c.sendBridge(ctx, wsproto.TypeVCPToolResult, map[string]any{"requestId": m.RequestID, "status": "success", "result": result})
}

// serverResult is what the server's PluginManager makes of a plugin's
// answer before its bridge sends it: a top-level status "error" becomes a
// failure (its error or message the text), {status:"success", result:{…}}
// is unwrapped, anything but an object is wrapped as original_plugin_output,
// and MaidName (from a maid argument) and timestamp are added.
func serverResult(tool string, args map[string]json.RawMessage, result any, now time.Time) (any, error) {
	var obj map[string]any
	if raw, err := json.Marshal(result); err == nil && result != nil {
		if len(raw) > 0 && raw[0] == '[' {
			// An array is an object to the server: the fields it adds are
			// lost when it is sent.
			return result, nil
		}
		_ = json.Unmarshal(raw, &obj)
	}
	if obj != nil && obj["status"] == "error" {
		text := fmt.Sprintf("Plugin %q reported an unspecified error.", tool)
		for _, k := range []string{"error", "message"} {
			if v, ok := obj[k]; ok && v != nil && v != "" && v != false {
				text = fmt.Sprint(v)
				break
			}
		}
		return nil, BridgeTaskError(text)
	}
	if inner, ok := obj["result"].(map[string]any); ok && obj["status"] == "success" {
		obj = inner
	}
	if obj == nil {
		obj = map[string]any{}
		if result != nil { // undefined leaves the key out of the JSON
			obj["original_plugin_output"] = result
		}
	}
	var maid string
	if json.Unmarshal(args["maid"], &maid) == nil && maid != "" {
		obj["MaidName"] = maid
	}
	obj["timestamp"] = now.Format("2006-01-02T15:04:05.000-07:00")
	return obj, nil
}

// serverErrorText is the bridge's error text: a JSON error message gives
// its plugin_error or plugin_execution_error.
func serverErrorText(err error) any {
	text := err.Error()
	var parsed map[string]any
	if json.Unmarshal([]byte(text), &parsed) == nil {
		for _, k := range []string{"plugin_error", "plugin_execution_error"} {
			if v, ok := parsed[k]; ok && v != nil && v != "" && v != false {
				return v
			}
		}
	}
	return text
}

// taskOf is a result's truthy taskId, as text.
func taskOf(result any) string {
	raw, err := json.Marshal(result)
	if err != nil {
		return ""
	}
	var r struct {
		TaskID any `json:"taskId"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return ""
	}
	switch v := r.TaskID.(type) {
	case string:
		return v
	case float64:
		if v != 0 {
			return fmt.Sprint(v)
		}
	}
	return ""
}

func (c *Conn) sendBridge(ctx context.Context, t wsproto.Type, data any) {
	frame, err := json.Marshal(map[string]any{"type": t, "data": data})
	if err == nil {
		err = c.SendRaw(ctx, frame)
	}
	if err != nil && !errors.Is(err, ErrConnClosed) {
		c.hub.logf("demohub: connection %s: bridge answer: %v", c.id, err)
	}
}

// ErrNoTask: no connection started the task, or its result was sent already.
var ErrNoTask = errors.New("demohub: no bridged task with this id")

// BridgeStatus sends a progress event of task to the connection that
// started it, as the server forwards its vcp_log (kind "log") and vcp_info
// ("info") events: the event's fields plus bridgeType. On the real server
// only plugins that push such events themselves with the task's id produce
// them; a stdio asynchronous plugin never does. The event names the
// task by job_id unless data has job_id or taskId already.
func (h *Hub) BridgeStatus(ctx context.Context, task, kind string, data map[string]any) error {
	c := h.taskConn(task, false)
	if c == nil {
		return fmt.Errorf("%w: %q", ErrNoTask, task)
	}
	ev := map[string]any{}
	for k, v := range data {
		ev[k] = v
	}
	if ev["job_id"] == nil && ev["taskId"] == nil {
		ev["job_id"] = task
	}
	ev["bridgeType"] = kind
	frame, err := json.Marshal(map[string]any{"type": wsproto.TypeVCPToolStatus, "data": ev})
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, frame)
}

// BridgeCallback sends task's late result to the connection that started
// it, as vcp_tool_result with the taskId as requestId, and forgets the task.
// The server's bridge sends this when its plugin_async_callback event fires;
// VCPToolBox up to at least 3c070506 never raises that event (its
// /plugin-callback route only stores the result), so a test of what a node
// meets today leaves it uncalled.
func (h *Hub) BridgeCallback(ctx context.Context, task string, data any) error {
	c := h.taskConn(task, true)
	if c == nil {
		return fmt.Errorf("%w: %q", ErrNoTask, task)
	}
	frame, err := json.Marshal(map[string]any{"type": wsproto.TypeVCPToolResult,
		"data": map[string]any{"requestId": task, "status": "success", "result": data}})
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, frame)
}

func (h *Hub) taskConn(task string, forget bool) *Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.bridgeTasks[task]
	if forget {
		delete(h.bridgeTasks, task)
	}
	return c
}

// SetBridgePlugins replaces the server's plugins, as a server whose plugins
// changed (a hot reload) has them: later lists and calls see the new ones.
func (h *Hub) SetBridgePlugins(plugins []BridgePlugin) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bridgePlugins = slices.Clone(plugins)
	h.bridgeSet = true
}

func (h *Hub) bridgePluginList() []BridgePlugin {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bridgeSet {
		return slices.Clone(h.bridgePlugins)
	}
	return slices.Clone(h.opts.Bridge.Plugins)
}
