package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/humantext"
	"github.com/vcpnode/vcpnode/observer"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
)

// The node's side of the control API: the methods the control server's
// backend interface names, answering in controlapi's types. An error
// whose status is not the endpoint's default is a *controlapi.APIError.

// answerWith marks err to be answered with an HTTP status code.
func answerWith(code int, err error) error {
	return &controlapi.APIError{Status: code, Message: err.Error()}
}

// Call runs a call from the owner (POST /v1/call): as `vcpnode call`, or
// through `vcpnode mcp` (req.Via) only for a tool offered to MCP clients.
// A tool that fails is no error: see CallResponse.OK.
func (n *Node) Call(ctx context.Context, req controlapi.CallRequest) (controlapi.CallResponse, error) {
	if req.Args == nil {
		req.Args = map[string]json.RawMessage{} // the server always sends an object
	}
	id := "local-" + rand.Text()[:8]
	started := time.Now()
	if f := controlapi.ProgressOf(ctx); f != nil {
		// An asynchronous server tool's task: accepted, then its events.
		ctx = bridge.WithProgress(ctx, func(p bridge.Progress) {
			f(controlapi.CallProgress{TaskID: p.TaskID, Kind: p.Kind, Message: progressText(p), Data: p.Data, Dropped: p.Dropped})
		})
	}
	var o toolhost.Outcome
	if req.Via == controlapi.ViaMCP {
		id = "mcp-" + rand.Text()[:8]
		o = n.callMCP(ctx, id, req.Tool, req.Args) // control_mcp.go
	} else {
		o = n.CallLocal(ctx, id, req.Tool, req.Args)
	}
	switch {
	case errors.Is(o.Cause, toolhost.ErrUnknownTool) && req.Via != controlapi.ViaMCP:
		return controlapi.CallResponse{}, answerWith(http.StatusNotFound, n.withClosestTool(o.Cause, req.Tool))
	case errors.Is(o.Cause, toolhost.ErrUnknownTool):
		return controlapi.CallResponse{}, answerWith(http.StatusNotFound, o.Cause)
	case errors.Is(o.Cause, toolhost.ErrShuttingDown):
		return controlapi.CallResponse{}, answerWith(http.StatusServiceUnavailable, o.Cause)
	}
	return controlapi.CallResponse{
		RequestID: id, Tool: req.Tool, OK: o.OK(), Result: o.Result, Error: o.Err,
		Outcome: toolhost.OutcomeKind(o), DurationMs: time.Since(started).Milliseconds(),
	}, nil
}

// withClosestTool adds to err, about the unknown tool name, the tool the
// owner most likely meant; for a server tool's name, why the server's list
// has none (bridge.go). Only for the owner's own commands: an MCP client
// is never told of a tool it is not offered.
func (n *Node) withClosestTool(err error, name string) error {
	if why := n.unlistedServerTool(name, true); why != nil {
		return why
	}
	if local, ok := n.serverToolAs(name); ok {
		return fmt.Errorf("%w (the server's tool %s is %s here: vcpnode server call %s)", err, name, local, name)
	}
	var names []string
	for _, t := range n.Tools() {
		names = append(names, t.Spec.Name)
	}
	if c := humantext.Closest(name, names); c != "" {
		return fmt.Errorf("%w (did you mean %q?)", err, c)
	}
	return err
}

// Phase is where the hub connection is.
func (n *Node) Phase() controlapi.Phase {
	st, _ := n.State()
	return st.Phase
}

// PendingApprovals lists the calls awaiting the owner: this node's, then
// the server's.
func (n *Node) PendingApprovals() []controlapi.ApprovalStatus {
	out := []controlapi.ApprovalStatus{}
	for _, p := range n.Approvals().Pending() {
		out = append(out, approvalStatus(p))
	}
	for _, a := range n.obs.Pending() {
		out = append(out, serverApprovalStatus(a))
	}
	return out
}

// Decide approves or denies a pending call: a server approval (its
// requestId, "approve-…") over the observer channel, else this node's,
// remembering the answer first when req.Always (approval_rules.go).
func (n *Node) Decide(id string, approve bool, req controlapi.DecisionRequest) (controlapi.DecisionResponse, error) {
	if _, ok := n.obs.Lookup(id); ok || strings.HasPrefix(id, "approve-") {
		if req.Always {
			return controlapi.DecisionResponse{}, answerWith(http.StatusBadRequest, errServerAlways)
		}
		a, err := n.obs.Answer(id, approve, req.Reason)
		if err != nil {
			code := http.StatusServiceUnavailable
			if errors.Is(err, observer.ErrNoSuchApproval) {
				code = http.StatusNotFound
			}
			return controlapi.DecisionResponse{}, answerWith(code, err)
		}
		return controlapi.DecisionResponse{Approval: serverApprovalStatus(a)}, nil
	}
	var res controlapi.DecisionResponse
	if req.Always {
		p, ok := n.Approvals().Get(id)
		if !ok {
			// Ids are never reused: this only fetches the "no such id" error.
			_, err := n.Approvals().Decide(id, approve, req.Reason)
			return res, answerWith(http.StatusNotFound, err)
		}
		var decided toolhost.PendingApproval
		var decideErr error
		r, err := n.rememberRule(p, approve, req.Reason, func() {
			decided, decideErr = n.Approvals().Decide(id, approve, req.Reason)
		})
		if err != nil {
			return res, err
		}
		res.Rule = &r
		if decideErr == nil {
			res.Approval = approvalStatus(decided)
			return res, nil
		}
	}
	p, err := n.Approvals().Decide(id, approve, req.Reason)
	if err != nil {
		if res.Rule != nil {
			err = fmt.Errorf("%w; the rule %s is kept", err, res.Rule.ID)
		}
		return res, answerWith(http.StatusNotFound, err)
	}
	res.Approval = approvalStatus(p)
	return res, nil
}

// ToolOverride is SetToolOverride with the control API's status codes.
func (n *Node) ToolOverride(name string, req controlapi.ToolOverrideRequest) (controlapi.ToolOverrideResponse, error) {
	res, err := n.SetToolOverride(name, req)
	switch {
	case errors.Is(err, toolhost.ErrUnknownTool):
		return res, answerWith(http.StatusNotFound, err)
	case errors.Is(err, errNoOverrides):
		return res, answerWith(http.StatusConflict, err)
	}
	return res, err
}

// SubscribeEvents follows the event log for GET /v1/events: start is the
// last id published when the stream began; next waits for events (and
// says how many this reader lost); cancel ends the subscription.
func (n *Node) SubscribeEvents(backlog bool, since uint64) (start uint64,
	next func(ctx context.Context, stop <-chan struct{}) ([]controlapi.Event, int, error), cancel func()) {
	sub, start := n.events.Subscribe(backlog, since)
	return start, sub.Next, func() { n.events.Unsubscribe(sub) }
}

func approvalStatus(p toolhost.PendingApproval) controlapi.ApprovalStatus {
	return controlapi.ApprovalStatus{ID: p.ID, RequestID: p.RequestID, Tool: p.Tool, Command: p.Command, Args: p.Args, Requested: p.Requested, Expires: p.Expires, Where: controlapi.WaitsOnNode}
}

func serverApprovalStatus(a observer.Approval) controlapi.ApprovalStatus {
	return controlapi.ApprovalStatus{
		ID: a.RequestID, RequestID: a.RequestID, Tool: a.Tool, Args: a.Args, Requested: a.Requested, Expires: a.Expires,
		Where: controlapi.WaitsOnServer, Maid: a.Maid, TTLMs: a.TTL.Milliseconds(),
	}
}

// Placeholders lists every placeholder this node feeds, sorted by key,
// and the sources feeding them.
func (n *Node) Placeholders() controlapi.PlaceholdersResponse { return n.ph.Status() }

// Prompt renders the exposed tools in format (textproto.PromptFormats):
// "vcp" from the very manifests register_tools
// sends, the others from the same tools' specs.
func (n *Node) Prompt(format string) (controlapi.PromptResponse, error) {
	if format == "" {
		format = textproto.PromptVCP
	}
	canonical, ok := textproto.PromptFormat(format)
	if !ok {
		return controlapi.PromptResponse{Format: format}, fmt.Errorf("%w: format %q is not one of %s", errBadPromptFormat, format, strings.Join(textproto.PromptFormats, ", "))
	}
	out := controlapi.PromptResponse{Format: canonical}
	if canonical == textproto.PromptVCP {
		raws, err := n.disp.Manifests()
		if err != nil {
			return out, err
		}
		manifests := make([]toolhost.Manifest, len(raws))
		for i, raw := range raws {
			if err := json.Unmarshal(raw, &manifests[i]); err != nil {
				return out, fmt.Errorf("read back manifest %d: %w", i, err)
			}
		}
		out.Tools, out.Text = len(manifests), textproto.VCPPrompt(manifests)
		return out, nil
	}
	var specs []toolhost.Spec
	for _, t := range n.Tools() {
		if t.Exposure.Exposed && !t.Spec.Implicit {
			specs = append(specs, t.Spec)
		}
	}
	var err error
	out.Tools = len(specs)
	out.Text, err = textproto.RenderSpecs(canonical, specs)
	return out, err
}

var errBadPromptFormat = errors.New("unknown prompt format")
