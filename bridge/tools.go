package bridge

import (
	"context"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Prefix starts the local name of every server tool: vcp_<ServerTool>.
// Local tool names never need it, so the two cannot be confused.
const Prefix = "vcp_"

// ToolName is the local name of the server's tool server.
func ToolName(server string) string { return Prefix + server }

// ServerName is the server's name of a local name, or false when local is
// not one of the server's tools.
func ServerName(local string) (string, bool) {
	name, ok := strings.CutPrefix(local, Prefix)
	return name, ok && name != ""
}

// Source is what `vcpnode tools` shows as the tools' source.
const Source = "server (VCPToolBridge)"

// Tools are the server's last list as tools of this node, each calling
// through c; timeout is their declared timeout (zero: the default).
func (c *Client) Tools(timeout time.Duration) []toolhost.Tool {
	plugins := c.Plugins()
	out := make([]toolhost.Tool, 0, len(plugins))
	for _, p := range plugins {
		out = append(out, &serverTool{c: c, server: p.Name, spec: specOf(p, timeout)})
	}
	return out
}

func specOf(p wsproto.VCPPlugin, timeout time.Duration) toolhost.Spec {
	s := toolhost.Spec{
		Name:        ToolName(p.Name),
		DisplayName: p.DisplayName,
		Version:     p.Version,
		Description: p.Description,
		Timeout:     timeout,
		Source:      Source,
		FromServer:  true,
	}
	for _, cmd := range p.Capabilities.InvocationCommands {
		s.Commands = append(s.Commands, toolhost.Command{Command: cmd.Command, Description: cmd.Description, Example: cmd.Example})
	}
	return s
}

type serverTool struct {
	c      *Client
	server string
	spec   toolhost.Spec
}

func (t *serverTool) Spec() toolhost.Spec { return t.spec }

// Invoke runs the call on the server and returns its result as the server
// sent it.
func (t *serverTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	res, err := t.c.Call(ctx, t.server, call.Args, ProgressOf(ctx))
	if err != nil {
		return nil, err
	}
	return res, nil
}

type progressKey struct{}

// WithProgress makes calls made with the returned context report an
// asynchronous tool's progress to f.
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressOf is the progress function set by WithProgress, or nil.
func ProgressOf(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}
