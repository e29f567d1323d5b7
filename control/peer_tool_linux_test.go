package control

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/controltest"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testuser"
)

// everyEndpoint is each route of the control API, with a path that reaches
// it, and a path that reaches none.
var everyEndpoint = append(controltest.Endpoints("Echo"), controltest.Endpoint{Method: http.MethodGet, Path: "/v1/no-such-endpoint"})

// TestToolPeerRefused: a peer whose pid is a tool's process (here: this
// test process, as Options.ToolProcess says) is refused on every endpoint,
// reading ones included, and the backend never hears of it; another pid
// gets through.
func TestToolPeerRefused(t *testing.T) {
	h := startFake(t)
	var toolPid atomic.Int64
	srv, err := Listen(h.ctx, h.b, Options{Socket: testnet.SocketPath(t), Log: h.log,
		ToolProcess: func(pid int) bool { return int64(pid) == toolPid.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(h.ctx) })
	c := controlapi.NewControlClient(srv.Socket())
	t.Cleanup(c.Close)

	toolPid.Store(int64(os.Getpid()))
	for _, e := range everyEndpoint {
		var api *controlapi.APIError
		err := c.Do(h.ctx, e.Method, e.Path, nil, nil)
		if !errors.As(err, &api) || api.Status != http.StatusForbidden || !strings.Contains(err.Error(), "a process a tool started") {
			t.Errorf("%s %s from a tool's process: %v, want 403", e.Method, e.Path, err)
		}
	}
	h.b.mu.Lock()
	reached := len(h.b.decisions)
	h.b.mu.Unlock()
	if n, _ := h.b.seen(); reached != 0 || n != 0 {
		t.Errorf("the backend was asked by a tool's process: %d decisions, %d calls", reached, n)
	}
	c.Close() // a new connection: the peer is told at connect
	toolPid.Store(-1)
	c2 := controlapi.NewControlClient(srv.Socket())
	t.Cleanup(c2.Close)
	if _, err := c2.Status(h.ctx); err != nil {
		t.Errorf("status from the owner: %v", err)
	}
	if res, err := c2.DecideWith(h.ctx, "1", true, controlapi.DecisionRequest{Always: true}); err != nil || res.Rule == nil {
		t.Errorf("approve --always from the owner: %+v, %v", res, err)
	}
	if _, err := c2.ForgetRule(h.ctx, "Echo"); err != nil {
		t.Errorf("forget from the owner: %v", err)
	}
}

// TestPeerThatEndedIsRefused: a process connects and is gone (reaped, its
// pid free for another) before the daemon asks about it: it cannot be told
// apart from whoever takes the pid next, so it is refused.
func TestPeerThatEndedIsRefused(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to connect from a process that then exits")
	}
	sock := filepath.Join(testnet.SocketPath(t))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The kernel completes the connect before accept: the client exits and
	// is reaped first.
	out, err := exec.Command(py, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(__import__('os').getpid())", sock).CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v %s", err, out)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := &Server{opts: Options{ToolProcess: func(int) bool { return false }}}
	pid := peerPID(c)
	if pid <= 0 {
		t.Fatalf("no peer pid for a Unix connection: %d", pid)
	}
	if err := s.toolPeerError(c, pid); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("a peer that ended: %v, want refused", err)
	}
	// A live peer that is no tool's gets through.
	c2, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c3, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := s.toolPeerError(c3, peerPID(c3)); err != nil {
		t.Errorf("a live owner: %v", err)
	}
}

// TestToolPeerAsAUser: the same, for a daemon run by an ordinary user.
func TestToolPeerAsAUser(t *testing.T) {
	testuser.Rerun(t, "^(TestToolPeerRefused|TestPeerThatEndedIsRefused)$")
}
