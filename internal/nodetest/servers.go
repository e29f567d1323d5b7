package nodetest

import (
	"context"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/controltest"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

// Control serves the node's control API on a socket of the test's own,
// closed (and checked gone) when the test ends, and returns a client.
// configFile is what the API says the config file is.
func (h *Harness) Control(configFile string) (*control.Server, *controlapi.ControlClient) {
	t := h.t
	t.Helper()
	srv, err := control.Listen(h.Ctx, h.Node, control.Options{
		Socket: testnet.SocketPath(t), ConfigFile: configFile, Version: "1.2.3-test", MetricsAddr: "127.0.0.1:9464", Log: h.Log,
	})
	if err != nil {
		t.Fatalf("control.Listen: %v", err)
	}
	return srv, controltest.Connect(t, srv)
}

// Console serves the node's console on a free loopback port, with its
// control socket, idle logging out after idle.
func (h *Harness) Console(idle time.Duration) (*control.Console, *controlapi.ControlClient) {
	t := h.t
	t.Helper()
	srv, c := h.Control("")
	con, err := control.ListenConsole(srv, config.ConsoleConfig{Listen: "127.0.0.1:0", IdleTimeout: config.Duration(idle)}, h.Log)
	if err != nil {
		t.Fatalf("control.ListenConsole: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		con.Close(ctx)
	})
	return con, c
}

// Metrics serves the node's /metrics on a free loopback port.
func (h *Harness) Metrics() *control.MetricsServer {
	t := h.t
	t.Helper()
	srv, err := control.ListenMetrics(h.Node, config.MetricsConfig{Listen: "127.0.0.1:0"}, h.Log)
	if err != nil {
		t.Fatalf("control.ListenMetrics: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("close metrics: %v", err)
		}
	})
	return srv
}
