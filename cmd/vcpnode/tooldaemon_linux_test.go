package main

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/wsproto"
)

// toolDaemon is the real daemon (this test binary as vcpnode) run with
// cfg on sock and connected to hub, whose calls the tests make.
type toolDaemon struct {
	ctx     context.Context
	cmd     *exec.Cmd
	logs    *testlog.Buffer
	conn    *demohub.Conn
	stopped bool
}

// startToolDaemon starts the daemon and waits for its connection; at the
// test's end it is stopped with SIGTERM (unless the test did) and must
// have exited cleanly without the key in its log.
func startToolDaemon(t *testing.T, ctx context.Context, hub *demohub.Hub, cfg, sock string) *toolDaemon {
	t.Helper()
	d := &toolDaemon{ctx: ctx, logs: &testlog.Buffer{}}
	d.cmd = exec.CommandContext(ctx, selfPath(t), "run", "--config", cfg, "--socket", sock)
	d.cmd.Env = hermeticEnv(t, asVCPNodeEnv+"=1")
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !d.stopped {
			if err := d.stop(); err != nil {
				t.Errorf("vcpnode run: %v\n%s", err, d.logs)
			}
		}
		if strings.Contains(d.logs.String(), ctlTestKey) {
			t.Errorf("the key reached the daemon's log")
		}
	})
	conn, err := hub.Accept(ctx)
	if err != nil {
		t.Fatalf("the daemon never connected: %v\n%s", err, d.logs)
	}
	d.conn = conn
	return d
}

// stop sends SIGTERM and waits for the daemon to exit.
func (d *toolDaemon) stop() error {
	d.stopped = true
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	return d.cmd.Wait()
}

// call calls tool without arguments; the result arrives on the channel.
func (d *toolDaemon) call(tool string) <-chan wsproto.ToolResult {
	out := make(chan wsproto.ToolResult, 1)
	go func() {
		res, err := d.conn.Call(d.ctx, tool, nil)
		if err != nil {
			res = wsproto.ToolResult{Status: "no result", Error: err.Error()}
		}
		out <- res
	}()
	return out
}

// wait is the result on ch.
func (d *toolDaemon) wait(t *testing.T, ch <-chan wsproto.ToolResult) wsproto.ToolResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-d.ctx.Done():
		t.Fatalf("no tool_result\n%s", d.logs)
		return wsproto.ToolResult{}
	}
}
