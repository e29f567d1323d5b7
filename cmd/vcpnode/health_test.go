package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// health is the verdict scripts and container health checks read: exit 0
// with one line while the node is connected with its tools registered,
// exit 1 with the reason once it is not, and when no daemon answers.
func TestHealthCommand(t *testing.T) {
	d := startDaemon(t, "")
	d.accept()
	var out, errOut string
	testwait.For(t, "health to pass while connected", func() bool {
		var code int
		code, out, errOut = d.ctl("health")
		return code == exitOK
	})
	if out != "healthy: connected to "+d.node.HubURL()+", tools registered\n" || errOut != "" {
		t.Errorf("health = %q %q", out, errOut)
	}

	d.hub.Close()
	testwait.For(t, "health to fail once disconnected", func() bool {
		var code int
		code, out, errOut = d.ctl("health")
		return code == exitError
	})
	if out != "" || !strings.HasPrefix(errOut, "vcpnode: unhealthy: not connected to the server (") {
		t.Errorf("health while disconnected = %q %q", out, errOut)
	}

	d.stop()
	if code, _, errOut := d.ctl("health"); code != exitError || !strings.Contains(errOut, "cannot reach vcpnode") {
		t.Errorf("health without a daemon = %d %q", code, errOut)
	}
}
