package node

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestFinishWithinLeavesTheKillStepInsideTheGrace(t *testing.T) {
	for _, c := range []struct{ grace, kill, want time.Duration }{
		{10 * time.Second, 2 * time.Second, 8 * time.Second},
		{4 * time.Second, 2 * time.Second, 2 * time.Second},
		{3 * time.Second, 2 * time.Second, 1500 * time.Millisecond},
		{0, 2 * time.Second, 0},
		{time.Minute, 0, time.Minute},
	} {
		got := finishWithin(c.grace, c.kill)
		if got != c.want {
			t.Errorf("finishWithin(%v, %v) = %v, want %v", c.grace, c.kill, got, c.want)
		}
		if c.grace >= 2*c.kill && got+c.kill > c.grace {
			t.Errorf("finishWithin(%v, %v) = %v leaves no room for the kill step", c.grace, c.kill, got)
		}
	}
}

// A plugin that ignores SIGTERM is still killed at shutdown, and its call
// answered; the node then stops. (How long it took is logged; the budget
// itself is checked above without a clock.)
func TestShutdownKillsAPluginThatIgnoresSIGTERM(t *testing.T) {
	needCommands(t, "sh", "sleep")
	plugins := t.TempDir()
	writePlugin(t, plugins, "Stubborn", `{"name":"Stubborn","displayName":"Stubborn","pluginType":"synchronous",
"description":"ignores SIGTERM","entryPoint":{"command":"sh stubborn.sh"},"communication":{"protocol":"stdio","timeout":60000}}`,
		map[string]string{"stubborn.sh": "trap '' TERM\ncat >/dev/null\necho $$ > pid.tmp && mv pid.tmp pid\nsleep 60 &\nwait\n"})
	o := pluginHarness(t.TempDir(), false, plugins).andConfig(func(c *config.Config) {
		c.Node.ShutdownGrace = config.Duration(5 * time.Second)
	})
	h := startHarness(t, o)
	c := h.accept()
	if err := c.Execute(h.ctx, wsproto.ExecuteTool{RequestID: "stubborn", ToolName: "Stubborn"}); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(plugins, "Stubborn", "pid")
	var pid int
	h.waitUntil("the plugin to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	// The pid of its PID namespace, where it works in its folder.
	if host := proctreetest.HostPid(pid, filepath.Dir(pidFile)); host != 0 {
		pid = host
	}
	began := time.Now()
	h.stop()
	msg, err := c.WaitFor(h.ctx, func(m wsproto.Message) bool {
		r, ok := m.(wsproto.ToolResult)
		return ok && r.RequestID == "stubborn"
	})
	if err != nil || msg.(wsproto.ToolResult).Status != wsproto.StatusError {
		t.Fatalf("stubborn call at shutdown: %+v, %v", msg, err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	t.Logf("stopped %v after the stop was asked (shutdown_grace 5s)", time.Since(began).Round(time.Millisecond))
	if err := signalPid(pid, syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("the plugin process %d survived the shutdown (kill 0: %v)", pid, err)
	}
}

// signalPid sends sig to pid: os.ErrProcessDone once it has exited. Through
// os rather than syscall.Kill so the package's tests compile on Windows.
func signalPid(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return os.ErrProcessDone // Windows: no such process
	}
	return p.Signal(sig)
}
