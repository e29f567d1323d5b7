//go:build linux

package control_test

// A real control client run as another user against the socket of a
// whole node (nodetest): the socket's modes and SO_PEERCRED decide.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/control"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/nodetest"
)

// peerClientEnv makes the test binary act as a control client (see init):
// the permission tests run it as another user.
const peerClientEnv = "VCPNODE_TEST_CONTROL_PEER"

// nobody is the uid the permission tests run their client as.
const nobody = 65534

// peerReport is what the client process prints.
type peerReport struct {
	StatusErr     string `json:"statusErr"`
	ReconnectErr  string `json:"reconnectErr"`
	ReconnectHTTP int    `json:"reconnectHttp"`
	ApprovalsHTTP int    `json:"approvalsHttp"`
}

func init() {
	if sock := os.Getenv(peerClientEnv); sock != "" {
		os.Exit(runPeerClient(sock))
	}
}

func runPeerClient(sock string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := controlapi.NewControlClient(sock)
	var rep peerReport
	if _, err := c.Status(ctx); err != nil {
		rep.StatusErr = err.Error()
	}
	if _, err := c.Reconnect(ctx); err != nil {
		rep.ReconnectErr = err.Error()
		var api *controlapi.APIError
		if errors.As(err, &api) {
			rep.ReconnectHTTP = api.Status
		}
	}
	var api *controlapi.APIError
	if _, err := c.Approvals(ctx); errors.As(err, &api) {
		rep.ApprovalsHTTP = api.Status
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// runAsNobody runs a copy of this test binary as uid 65534 against sock.
func runAsNobody(t *testing.T, sock string) peerReport {
	t.Helper()
	// The go test binary sits in a private build directory: copy it where
	// nobody can execute it.
	dir, err := os.MkdirTemp("", "vcbin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	copyFile(t, self, bin, 0o755)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^$")
	cmd.Env = []string{peerClientEnv + "=" + sock, "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client as uid %d: %v (%s)", nobody, err, out)
	}
	var rep peerReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return rep
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestControlPermissions runs a real client as another user: the socket's
// mode keeps it out, and where the socket is opened up, SO_PEERCRED still
// keeps it from changing anything.
func TestControlPermissions(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user; run the tests as root to cover SO_PEERCRED")
	}
	h := nodetest.Start(t, nodetest.Options{})
	h.Accept()
	srv, _ := h.Control("")
	sock := srv.Socket()

	t.Run("socket mode 0600", func(t *testing.T) {
		if err := os.Chmod(filepath.Dir(sock), 0o755); err != nil {
			t.Fatal(err)
		}
		rep := runAsNobody(t, sock)
		for _, msg := range []string{rep.StatusErr, rep.ReconnectErr} {
			if !strings.Contains(msg, "permission denied") || !strings.Contains(msg, "run this as root or as the user the daemon runs as") {
				t.Errorf("client as nobody got %q, want a permission error", msg)
			}
		}
	})
	t.Run("socket opened up", func(t *testing.T) {
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		rep := runAsNobody(t, sock)
		want := fmt.Sprintf("permission denied: uid %d may not change this daemon; only root or uid 0", nobody)
		if rep.StatusErr != "" {
			t.Errorf("status as nobody: %s (reading is allowed to whoever can open the socket)", rep.StatusErr)
		}
		if rep.ReconnectHTTP != 403 || rep.ReconnectErr != want+" (the daemon's user) may" {
			t.Errorf("reconnect as nobody = %d %q, want 403 %q", rep.ReconnectHTTP, rep.ReconnectErr, want)
		}
		if rep.ApprovalsHTTP != 403 {
			t.Errorf("approvals as nobody = HTTP %d, want 403: held calls' arguments are the owner's", rep.ApprovalsHTTP)
		}
		h.WaitLog("control request refused")
	})
}

// TestControlGroupReadsOnly: with [control] group, the socket is 0660 of the
// group and a member (nobody, whose group is nogroup) may read status and
// the approvals list, but still not change anything.
func TestControlGroupReadsOnly(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user; run the tests as root to cover [control] group")
	}
	grp, err := user.LookupGroupId(strconv.Itoa(nobody))
	if err != nil {
		t.Skipf("no group with gid %d to test with: %v", nobody, err)
	}
	h := nodetest.Start(t, nodetest.Options{})
	h.Accept()
	base, err := os.MkdirTemp("", "vcg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(base, "made", "s.sock") // vcpnode makes the directory: 0750, the group's
	srv, err := control.Listen(h.Ctx, h.Node, control.Options{Socket: sock, Group: grp.Name, Log: h.Log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	for path, want := range map[string]os.FileMode{sock: 0o660, filepath.Dir(sock): 0o750} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != want || int(st.Gid) != nobody {
			t.Errorf("%s: mode %04o gid %d, want %04o gid %d", path, fi.Mode().Perm(), st.Gid, want, nobody)
		}
	}
	rep := runAsNobody(t, sock)
	if rep.StatusErr != "" || rep.ApprovalsHTTP != 0 {
		t.Errorf("a group member: status error %q, approvals HTTP %d; want both allowed", rep.StatusErr, rep.ApprovalsHTTP)
	}
	if rep.ReconnectHTTP != 403 {
		t.Errorf("a group member reconnected: HTTP %d %q, want 403", rep.ReconnectHTTP, rep.ReconnectErr)
	}

	// An unknown group is refused before anything listens.
	if _, err := control.Listen(h.Ctx, h.Node, control.Options{Socket: filepath.Join(base, "x.sock"), Group: "no-such-group-vcpnode", Log: h.Log}); err == nil || !strings.Contains(err.Error(), "[control] group") {
		t.Errorf("unknown group: %v", err)
	}
}
