package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/hubsession"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// hubHost is the node as the hub session engine sees it (hubsession.Host).
type hubHost struct{ n *Node }

func (h hubHost) Settings() *hubsession.Settings { return &h.n.settings().Settings }

func (h hubHost) Dispatch(ctx context.Context, st *hubsession.Settings, wire string, call toolhost.Call, reply func(toolhost.Outcome)) bool {
	h.n.callStarted(call.RequestID, wire, false)
	tool, known := h.n.localName(st.Config, wire) // names.go
	if !known {
		err := fmt.Errorf("%w %q", toolhost.ErrUnknownTool, wire)
		reply(toolhost.Outcome{RequestID: call.RequestID, Err: err.Error(), Cause: err})
		return true
	}
	return h.n.disp.Dispatch(ctx, tool, call, reply)
}

func (h hubHost) Cancel(requestID string) bool { return h.n.disp.Cancel(requestID) }

func (h hubHost) EndOrigin(o *toolhost.Origin, cause error) int {
	dropped, _ := h.n.disp.EndOrigin(o, cause)
	return dropped
}

func (h hubHost) Manifests(st *hubsession.Settings) ([]json.RawMessage, error) {
	tools, err := h.n.disp.Manifests()
	if renames(st.Config) {
		tools = wireManifests(st.Config, tools) // names.go
	}
	return tools, err
}

func (h hubHost) Capabilities(st *hubsession.Settings) wsproto.Capabilities {
	return h.n.capabilities(st.Config.Node.Labels) // machine.go
}

func (h hubHost) LocalIPs() ([]string, error) { return h.n.addrs() }

func (h hubHost) Connected(ctx context.Context, st *hubsession.Settings) {
	h.n.approvalChannelFirst(ctx, st.Config) // observers.go
}

func (h hubHost) Outbox() *outbox.Box { return h.n.plugins.Outbox() }

func (h hubHost) Rescan() error {
	_, err := h.n.Rescan()
	return err
}

func (h hubHost) Guard(what string, f func()) { h.n.guard(what, f) }

// hubAuthFile is where [hub] auth = "auto" keeps the ways that worked,
// for the next start: in cfg's state directory, or "" (in memory only)
// when there is none. Each way is kept by endpoint, so a new hub URL
// finds its own.
func (n *Node) hubAuthFile(cfg config.Config) string {
	path, err := cfg.HubAuthPath(n.getenv, os.Geteuid())
	if err != nil {
		return ""
	}
	return path
}

// useHubAuthFile points the node's connection and its observer channels
// at cfg's file: a reload may move the state directory, and the ways
// known now are written there at once.
func (n *Node) useHubAuthFile(cfg config.Config) {
	path := n.hubAuthFile(cfg)
	n.authWay.SetFile(path)
	n.obs.SetAuthFile(path)
}
